/* apps/cli.c: shared helpers of the subcommands (errors, options, JSON, loading). */
#define _POSIX_C_SOURCE 200809L
#include "apps/cli.h"
#include "core/context_impl.h" /* gs_context_staging_reserve */
#include "spmv/spmv_impl.h"    /* gs_upload_staging_max */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_hold_errors;
char cli_held_error[512];
int cli_strict;

int cli_fail(int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  if (cli_hold_errors) {
    vsnprintf(cli_held_error, sizeof cli_held_error, fmt, ap);
  } else {
    fputs("gpusolve: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
  }
  va_end(ap);
  return code;
}

int cli_status_code(gs_status_t st)
{
  switch (st) {
  case GS_SUCCESS: return CLI_OK;
  case GS_ERR_DEVICE_MEMORY:
  case GS_ERR_CUDA:
  case GS_ERR_CUBLAS:
  case GS_ERR_CUSPARSE:
  case GS_ERR_INTERNAL: return CLI_DEVICE;
  default: return CLI_BAD_INPUT;
  }
}

int cli_fail_status(gs_status_t st)
{
  const char *m = gs_last_error();
  return cli_fail(cli_status_code(st), "%s", m && *m ? m : gs_status_string(st));
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **value)
{
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n] != '\0') return 0;
  if (*i + 1 >= argc) {
    cli_fail(CLI_BAD_INPUT, "option %s needs a value", name);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    cli_fail(CLI_BAD_INPUT, "invalid value '%s' for %s (an integer in %ld..%ld)", s, opt, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo && v <= hi)) {
    cli_fail(CLI_BAD_INPUT, "invalid value '%s' for %s (a number in %g..%g)", s, opt, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_u64(const char *opt, const char *s, unsigned long long *out)
{
  char *end;
  errno = 0;
  if (*s == '-') goto bad;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end) goto bad;
  *out = v;
  return 0;
bad:
  cli_fail(CLI_BAD_INPUT, "invalid value '%s' for %s (a non-negative integer)", s, opt);
  return -1;
}

int cli_load_matrix_info(const char *path, gs_csr_t **A, gs_mm_info_t *info)
{
  gs_mm_info_t own;
  if (!info) info = &own;
  gs_status_t st = gs_mm_read_csr_ex(path, cli_strict ? GS_MM_STRICT : 0u, A, info);
  if (st != GS_SUCCESS) return cli_fail_status(st);
  /* read as SciPy reads it, but not silently (the library never prints) */
  if (info->symmetry == GS_SYM_SYMMETRIC && info->lower > 0 && info->upper > 0)
    fprintf(stderr,
            "gpusolve: warning: %s: symmetric file with entries on both sides of the diagonal "
            "(%lld below, %lld above): each is mirrored, so an (i, j) and (j, i) pair is summed "
            "(--strict refuses such a file)\n",
            path, (long long)info->lower, (long long)info->upper);
  return CLI_OK;
}

int cli_load_matrix(const char *path, gs_csr_t **A)
{
  return cli_load_matrix_info(path, A, NULL);
}

int cli_default_matrix(gs_csr_t **A, const char **label)
{
  if (label) *label = "built-in 27-point 3D Laplacian on a 64x64x64 grid";
  gs_status_t st = gs_gen_laplace(A, 64, 64, 64, 27);
  return st == GS_SUCCESS ? CLI_OK : cli_fail_status(st);
}

int cli_parse_grid(const char *s, long dims[3])
{
  dims[0] = dims[1] = dims[2] = 1;
  const char *p = s;
  for (int d = 0; d < 3; ++d) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 1 || v > 2147483647L) goto bad;
    dims[d] = v;
    if (*end == '\0') return 0;
    if (*end != 'x' || d == 2) goto bad;
    p = end + 1;
  }
bad:
  return cli_fail(CLI_BAD_INPUT, "invalid value '%s' for --grid (NX, NXxNY or NXxNYxNZ)", s);
}

int cli_grid_check(const char *grid, long stencil, long dims[3])
{
  if (cli_parse_grid(grid, dims)) return CLI_BAD_INPUT;
  if (stencil != 3 && stencil != 5 && stencil != 7 && stencil != 9 && stencil != 27)
    return cli_fail(CLI_BAD_INPUT, "invalid value '%ld' for --stencil (3, 5, 7, 9 or 27)",
                    stencil);
  /* a stencil on a grid of fewer dimensions is a contradiction, not a degenerate grid */
  int gdim = 1;
  for (const char *p = grid; *p; ++p) gdim += *p == 'x';
  const int sdim = stencil == 3 ? 1 : stencil == 5 || stencil == 9 ? 2 : 3;
  if (gdim < sdim)
    return cli_fail(CLI_BAD_INPUT, "--stencil %ld is a %dD stencil, but --grid %s is %dD (give "
                    "%s)", stencil, sdim, grid, gdim, sdim == 2 ? "NXxNY" : "NXxNYxNZ");
  if ((double)dims[0] * (double)dims[1] * (double)dims[2] > 2147483647.0)
    return cli_fail(CLI_BAD_INPUT, "--grid %s has more than 2^31-1 points", grid);
  return CLI_OK;
}

int cli_grid_laplace(const long dims[3], long stencil, gs_csr_t **A, char *label, size_t len)
{
  snprintf(label, len, "%ld-point Laplacian on a %ldx%ldx%ld grid", stencil, dims[0], dims[1],
           dims[2]);
  gs_status_t st = gs_gen_laplace(A, (gs_idx_t)dims[0], (gs_idx_t)dims[1], (gs_idx_t)dims[2],
                                  (int)stencil);
  return st == GS_SUCCESS ? CLI_OK : cli_fail_status(st);
}

int cli_has_opt(int argc, char **argv, const char *name)
{
  const size_t len = strlen(name);
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], name, len) && (argv[i][len] == '\0' || argv[i][len] == '='))
      return 1;
  return 0;
}

int cli_arg_switch(const char *a, const char *usage, const cli_switch_t *sw)
{
  if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
    fputs(usage, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) { /* e.g. > /dev/full: not a success */
      cli_fail(CLI_BAD_INPUT, "cannot write to standard output: %s", strerror(errno));
      exit(CLI_BAD_INPUT);
    }
    return 2;
  }
  for (; sw && sw->name; ++sw)
    if (!strcmp(a, sw->name) || (sw->alias && !strcmp(a, sw->alias))) {
      *sw->flag = 1;
      return 1;
    }
  if (!strcmp(a, "--strict")) { /* every command that reads a matrix */
    cli_strict = 1;
    return 1;
  }
  return 0;
}

int cli_arg_positional(const char *cmd, const char *a, const char **pos, int npos, int *used,
                       const char *too_many)
{
  if (a[0] == '-' && a[1] != '\0')
    return cli_fail(CLI_BAD_INPUT, "%s: unknown option '%s' (see 'gpusolve %s --help')", cmd, a,
                    cmd);
  if (*used < npos) {
    pos[(*used)++] = a;
    return CLI_OK;
  }
  char msg[512];
  snprintf(msg, sizeof msg, too_many, a);
  return cli_fail(CLI_BAD_INPUT, "%s: %s", cmd, msg);
}

/* The prefetched context: made on its own thread, taken (joined) by cli_context. The error
 * message is thread-local, so the thread keeps a copy for the caller's report. */
static struct {
  pthread_t thread;
  int started;
  gs_status_t st;
  gs_context_t *ctx;
  char error[1024];
  volatile int stop; /* set by cli_context_discard: the kernel preload stops at its next item */
  volatile int skip; /* set by cli_context_opt(, 0): the optional list stops at its next item */
  char what[1024];    /* gs_context_preload's list */
  char optional[256]; /* then this one, unless skipped */
} prefetch;

static void *prefetch_work(void *arg)
{
  (void)arg;
  prefetch.st = gs_context_create(&prefetch.ctx, 0);
  if (prefetch.st != GS_SUCCESS) snprintf(prefetch.error, sizeof prefetch.error, "%s", gs_last_error());
  else {
    (void)gs_context_staging_reserve(prefetch.ctx, gs_upload_staging_max()); /* pinned now */
    /* the kernels' lazy loading, while the matrix is read; a failure here only leaves them to
     * load on first use */
    (void)gs_context_preload(prefetch.ctx, prefetch.what, &prefetch.stop);
    if (prefetch.optional[0] && !prefetch.stop && !prefetch.skip)
      (void)gs_context_preload(prefetch.ctx, prefetch.optional, &prefetch.skip);
  }
  return NULL;
}

void cli_context_prefetch_opt(const char *preload, const char *optional)
{
  if (!prefetch.started) {
    prefetch.stop = prefetch.skip = 0;
    snprintf(prefetch.what, sizeof prefetch.what, "%s", preload);
    snprintf(prefetch.optional, sizeof prefetch.optional, "%s", optional ? optional : "");
    prefetch.started = pthread_create(&prefetch.thread, NULL, prefetch_work, NULL) == 0;
  }
}

void cli_context_prefetch(const char *preload) { cli_context_prefetch_opt(preload, NULL); }

const char *cli_preload_list(char *buf, size_t len, const char *format, const char *precond)
{
  if (precond && !strcmp(precond, "auto")) precond = "amg";
  const int pc = precond && strcmp(precond, "none") && strlen(precond) < 64;
  static const char light[] = "features,cusparse-csr,csr-vector,bccoo,sellp,ell,dia,coo,hyb";
  int has_auto = !format;
  for (const char *p = format; p && *p && !has_auto;) { /* an item "auto" in the list */
    const size_t n = strcspn(p, ",");
    has_auto = n == 4 && !strncmp(p, "auto", 4);
    p += n + (p[n] == ',');
  }
  if (format && !strcmp(format, "all"))
    snprintf(buf, len, "features,formats%s%s", pc ? "," : "", pc ? precond : "");
  else
    snprintf(buf, len, "%s%s%s%s%s", has_auto ? light : "", has_auto && format ? "," : "",
             format ? format : "", pc ? "," : "", pc ? precond : "");
  return buf;
}

void cli_context_discard(void)
{
  if (!prefetch.started) return;
  __atomic_store_n(&prefetch.stop, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&prefetch.skip, 1, __ATOMIC_RELAXED);
  pthread_join(prefetch.thread, NULL);
  prefetch.started = 0;
  gs_context_destroy(&prefetch.ctx);
}

int cli_context(gs_context_t **ctx) { return cli_context_opt(ctx, 1); }

int cli_context_opt(gs_context_t **ctx, int optional)
{
  if (prefetch.started) { /* the preload runs to its end: what it loads, the command uses */
    if (!optional) __atomic_store_n(&prefetch.skip, 1, __ATOMIC_RELAXED);
    pthread_join(prefetch.thread, NULL);
    prefetch.started = 0;
    *ctx = prefetch.ctx;
    prefetch.ctx = NULL;
    return prefetch.st == GS_SUCCESS ? CLI_OK : cli_fail(CLI_DEVICE, "%s", prefetch.error);
  }
  gs_status_t st = gs_context_create(ctx, 0);
  return st == GS_SUCCESS ? CLI_OK : cli_fail(CLI_DEVICE, "%s", gs_last_error());
}

double cli_now(void) { return gs_wall_seconds(); }

/* ---- JSON ---------------------------------------------------------------------------- */

static void json_sep(cli_json_t *j, const char *key)
{
  if (!j->first[j->depth]) fputc(',', j->f);
  j->first[j->depth] = 0;
  if (key) {
    fputc('"', j->f);
    for (const char *c = key; *c; ++c) fputc(*c, j->f);
    fputs("\":", j->f);
  }
}

static void json_escape(FILE *f, const char *s)
{
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}

static void json_top(cli_json_t *j, FILE *f, char open)
{
  memset(j, 0, sizeof *j);
  j->f = f;
  j->first[0] = 1;
  fputc(open, f);
}
void json_begin(cli_json_t *j, FILE *f) { json_top(j, f, '{'); }
void json_end(cli_json_t *j) { fputs("}\n", j->f); }
void json_begin_array(cli_json_t *j, FILE *f) { json_top(j, f, '['); }
void json_end_array(cli_json_t *j) { fputs("]\n", j->f); }
void json_key(cli_json_t *j, const char *key) { json_sep(j, key); }
static void json_open(cli_json_t *j, const char *key, char c)
{
  json_sep(j, key);
  fputc(c, j->f);
  if (j->depth < 31) j->depth++;
  j->first[j->depth] = 1;
}
static void json_close(cli_json_t *j, char c)
{
  fputc(c, j->f);
  if (j->depth > 0) j->depth--;
}
void json_obj_begin(cli_json_t *j, const char *key) { json_open(j, key, '{'); }
void json_obj_end(cli_json_t *j) { json_close(j, '}'); }
void json_arr_begin(cli_json_t *j, const char *key) { json_open(j, key, '['); }
void json_arr_end(cli_json_t *j) { json_close(j, ']'); }
void json_str(cli_json_t *j, const char *key, const char *v)
{
  json_sep(j, key);
  if (v) json_escape(j->f, v);
  else fputs("null", j->f);
}
void cli_json_reorder(cli_json_t *j, const gs_reorder_t *R, const gs_reorder_info_t *info)
{
  json_str(j, "reorder", R ? gs_reorder_string(info->kind) : "none");
  if (!R) return;
  json_num(j, "reorder_ms", 1e3 * info->seconds);
  json_int(j, "bandwidth_before", info->bandwidth_before);
  json_int(j, "bandwidth_after", info->bandwidth_after);
  json_int(j, "x_lines_before", info->lines_before);
  json_int(j, "x_lines_after", info->lines_after);
  json_str(j, "reorder_note", info->note);
}

void json_num(cli_json_t *j, const char *key, double v)
{
  json_sep(j, key);
  if (isfinite(v)) fprintf(j->f, "%.17g", v);
  else fputs("null", j->f);
}
void json_int(cli_json_t *j, const char *key, long long v)
{
  json_sep(j, key);
  fprintf(j->f, "%lld", v);
}
void json_bool(cli_json_t *j, const char *key, int v)
{
  json_sep(j, key);
  fputs(v ? "true" : "false", j->f);
}
