/* precond/precond.c: the preconditioner registry and dispatcher: the one place that calls
 * through a preconditioner's table, after validating its arguments. "none" lives here: it has
 * no data and copies r to z (the solvers skip it altogether, see gs_precond_is_identity). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "precond/amg_impl.h" /* gs_amg_near_null_check */
#include "precond/precond_impl.h"
#include "precond/block_jacobi.h" /* gs_precond_block_jacobi_ops */

struct gs_precond {
  const gs_precond_ops_t *ops;
  void *data;
  gs_context_t *ctx;
  gs_idx_t n;
  double setup_seconds;
  gs_precond_cfg_t cfg; /* the resolved options, for gs_precond_setup */
  double *nns;          /* gs_precond_set_near_null_space's vectors (n x nns_k), owned */
  int nns_k;
};

static gs_status_t none_setup(gs_context_t *ctx, gs_matrix_t *A, void **data)
{
  (void)ctx;
  (void)A;
  *data = NULL;
  return GS_SUCCESS;
}

static gs_status_t none_apply(gs_context_t *ctx, void *data, const double *d_r, double *d_z)
{
  (void)data;
  (void)ctx;
  (void)d_r;
  (void)d_z;
  return GS_SUCCESS; /* the copy is done by gs_precond_apply, which knows n */
}

static size_t none_bytes(const void *data)
{
  (void)data;
  return 0;
}

static void none_destroy(void *data) { (void)data; }

static const gs_precond_ops_t none_ops = {
  GS_PRECOND_OPS_VERSION, "none", "no preconditioner (z = r)",
  none_setup, none_apply, none_bytes, none_destroy,
  GS_PRECOND_FLAG_SYMMETRIC | GS_PRECOND_FLAG_CAPTURABLE,
  NULL, NULL, NULL, NULL, NULL};

static const gs_precond_ops_t *const registry[] = {
  &none_ops, &gs_precond_jacobi_ops, &gs_precond_ilu0_ops, &gs_precond_ic0_ops,
  &gs_precond_amg_ops, &gs_precond_block_jacobi_ops};
#define NREG (int)(sizeof registry / sizeof registry[0])

int gs_precond_count(void) { return NREG; }
const char *gs_precond_name_at(int i) { return i >= 0 && i < NREG ? registry[i]->name : NULL; }
const char *gs_precond_summary_at(int i)
{
  return i >= 0 && i < NREG ? registry[i]->summary : NULL;
}

/* Flags of a table; tables older than version 2 have none. */
static unsigned ops_flags(const gs_precond_ops_t *ops)
{
  return ops->version >= 2 ? ops->flags : 0u;
}

int gs_precond_symmetric_at(int i)
{
  return i >= 0 && i < NREG && (ops_flags(registry[i]) & GS_PRECOND_FLAG_SYMMETRIC) != 0;
}

int gs_precond_find(const char *name)
{
  if (!name) return -1;
  for (int i = 0; i < NREG; ++i)
    if (strcmp(registry[i]->name, name) == 0) return i;
  return -1;
}

/* "none, jacobi, ilu0, ic0 or amg": the registry's names for messages. */
static const char *name_list(void)
{
  static char buf[256];
  if (buf[0]) return buf;
  size_t k = 0;
  for (int i = 0; i < NREG && k < sizeof buf; ++i)
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", i == 0 ? "" : i == NREG - 1 ? " or " : ", ",
                          registry[i]->name);
  return buf;
}

static const gs_precond_option_t *opt_table(const gs_precond_ops_t *ops)
{
  return ops->version >= 3 ? ops->options : NULL;
}

static int opt_count(const gs_precond_ops_t *ops)
{
  const gs_precond_option_t *t = opt_table(ops);
  int k = 0;
  while (t && t[k].key) ++k;
  return k;
}

/* Word number `idx` of a '|'-separated list into out; 0 when there is none. */
static int choice_word(const char *choices, int idx, char *out, size_t len)
{
  const char *p = choices;
  for (int i = 0; p && *p; ++i) {
    const char *e = strchr(p, '|');
    const size_t n = e ? (size_t)(e - p) : strlen(p);
    if (i == idx) {
      if (n >= len) return 0;
      memcpy(out, p, n);
      out[n] = '\0';
      return 1;
    }
    p = e ? e + 1 : NULL;
  }
  return 0;
}

static int choice_index(const char *choices, const char *word)
{
  char w[GS_PRECOND_OPT_LEN];
  for (int i = 0; choice_word(choices, i, w, sizeof w); ++i)
    if (strcmp(w, word) == 0) return i;
  return -1;
}

/* The defaults of table t into cfg. */
static void cfg_defaults(const gs_precond_option_t *t, int n, gs_precond_cfg_t *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  for (int k = 0; k < n; ++k) {
    cfg->v[k] = t[k].def;
    if (t[k].kind == GS_PCOPT_CHOICE)
      choice_word(t[k].choices, (int)t[k].def, cfg->s[k], sizeof cfg->s[k]);
    else if (t[k].kind == GS_PCOPT_FORMAT)
      snprintf(cfg->s[k], sizeof cfg->s[k], "%s", t[k].choices);
  }
}

/* Parses "key=value,..." against ops' table into cfg (defaults first). */
static gs_status_t parse_options(const gs_precond_ops_t *ops, const char *options,
                                 gs_precond_cfg_t *cfg)
{
  const gs_precond_option_t *t = opt_table(ops);
  const int n = opt_count(ops);
  cfg_defaults(t, n, cfg);
  if (!options || !*options) return GS_SUCCESS;
  const char *p = options;
  while (*p) {
    const char *end = strchr(p, ',');
    const size_t len = end ? (size_t)(end - p) : strlen(p);
    char item[GS_PRECOND_PATH_LEN + 64];
    if (len == 0 || len >= sizeof item)
      return GS_ERROR(GS_ERR_INVALID_ARG, "preconditioner options '%s': %s", options,
                      len == 0 ? "an empty item" : "an item too long");
    memcpy(item, p, len);
    item[len] = '\0';
    char *eq = strchr(item, '=');
    if (!eq || eq == item || !eq[1])
      return GS_ERROR(GS_ERR_INVALID_ARG, "preconditioner option '%s' is not KEY=VALUE", item);
    *eq = '\0';
    const char *key = item, *val = eq + 1;
    const char *dot = strchr(key, '.');
    if (dot) { /* qualified: "amg.theta" */
      const size_t nl = (size_t)(dot - key);
      if (strlen(ops->name) != nl || strncmp(key, ops->name, nl) != 0)
        return GS_ERROR(GS_ERR_INVALID_ARG, "preconditioner option '%s' is for '%.*s', not %s",
                        key, (int)nl, key, ops->name);
      key = dot + 1;
    }
    int k = 0;
    while (k < n && strcmp(t[k].key, key) != 0) ++k;
    if (k == n) {
      char keys[200] = "";
      size_t kl = 0;
      for (int j = 0; j < n && kl < sizeof keys; ++j)
        kl += (size_t)snprintf(keys + kl, sizeof keys - kl, "%s%s", j ? ", " : "", t[j].key);
      return GS_ERROR(GS_ERR_INVALID_ARG, "preconditioner %s has no option '%s'%s%s%s",
                      ops->name, key, n ? " (it has " : " (it takes none)", n ? keys : "",
                      n ? ")" : "");
    }
    if (t[k].kind == GS_PCOPT_CHOICE) {
      const int c = choice_index(t[k].choices, val);
      if (c < 0)
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s.%s=%s: the value must be one of %s", ops->name,
                        key, val, t[k].choices);
      cfg->v[k] = c;
      snprintf(cfg->s[k], sizeof cfg->s[k], "%s", val);
    } else if (t[k].kind == GS_PCOPT_FORMAT) {
      if (strcmp(val, "auto") != 0 && gs_spmv_backend_find(val) < 0)
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s.%s=%s: not an SpMV format (gpusolve spmv "
                        "--list names them; or auto)", ops->name, key, val);
      if (strlen(val) >= sizeof cfg->s[k])
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s.%s: the name is too long", ops->name, key);
      snprintf(cfg->s[k], sizeof cfg->s[k], "%s", val);
    } else if (t[k].kind == GS_PCOPT_PATH) {
      if (strlen(val) >= sizeof cfg->path)
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s.%s: the file name is too long (at most %d bytes)",
                        ops->name, key, GS_PRECOND_PATH_LEN - 1);
      snprintf(cfg->path, sizeof cfg->path, "%s", val);
    } else {
      char *e = NULL;
      errno = 0;
      const double x = strtod(val, &e);
      if (e == val || *e || errno == ERANGE || !isfinite(x))
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s.%s=%s: not a number", ops->name, key, val);
      if (t[k].kind == GS_PCOPT_INT && x != floor(x))
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s.%s=%s: not an integer", ops->name, key, val);
      if (x < t[k].min || x > t[k].max)
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s.%s=%s: out of range [%g, %g]", ops->name, key,
                        val, t[k].min, t[k].max);
      cfg->v[k] = x;
    }
    p = end ? end + 1 : p + len;
  }
  return GS_SUCCESS;
}

gs_status_t gs_precond_options_check(const char *name, const char *options)
{
  gs_precond_cfg_t cfg;
  const int i = gs_precond_find(name);
  if (i < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "unknown preconditioner '%s' (%s)",
                    name ? name : "(null)", name_list());
  return parse_options(registry[i], options, &cfg);
}

int gs_precond_option_at(int i, int k, gs_precond_option_info_t *out)
{
  if (i < 0 || i >= NREG || k < 0 || k >= opt_count(registry[i]) || !out) return 0;
  const gs_precond_option_t *o = &opt_table(registry[i])[k];
  memset(out, 0, sizeof *out);
  out->key = o->key;
  out->help = o->help;
  if (o->kind == GS_PCOPT_CHOICE) {
    choice_word(o->choices, (int)o->def, out->def, sizeof out->def);
    out->values = o->choices;
  } else if (o->kind == GS_PCOPT_FORMAT) {
    snprintf(out->def, sizeof out->def, "%s", o->choices);
  } else if (o->kind == GS_PCOPT_PATH) {
    out->def[0] = '\0'; /* no file */
  } else {
    snprintf(out->def, sizeof out->def, "%g", o->def);
  }
  return 1;
}

/* The setup call of M's table for A. */
static gs_status_t run_setup(gs_precond_t *M, gs_matrix_t *A)
{
  gs_status_t st = GS_SUCCESS;
  const double t0 = gs_wall_seconds();
  M->cfg.nns = M->nns;
  M->cfg.nns_k = M->nns_k;
  if (M->ops->version >= 3 && M->ops->setup_cfg)
    GS_TRY(M->ops->setup_cfg(M->ctx, A, &M->cfg, &M->data));
  else
    GS_TRY(M->ops->setup(M->ctx, A, &M->data));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(M->ctx->stream)));
  M->setup_seconds = gs_wall_seconds() - t0;
cleanup:
  return st;
}

gs_status_t gs_precond_create_opts(gs_precond_t **out, gs_context_t *ctx, gs_matrix_t *A,
                                   const char *name, const char *options)
{
  gs_status_t st = GS_SUCCESS;
  gs_precond_t *M = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_create: out is NULL");
  *out = NULL;
  if (!ctx || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_create: NULL argument");
  int i = gs_precond_find(name);
  if (i < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "unknown preconditioner '%s' (%s)",
                    name ? name : "(null)", name_list());
  if (gs_matrix_context(A) != ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_create: the matrix was created on another "
                    "context");
  GS_CHECK(gs_context_activate(ctx));
  const gs_csr_t *h = gs_matrix_host(A);
  if (h->m != h->n)
    return GS_ERROR(GS_ERR_DIMENSION, "preconditioner %s needs a square matrix, not %d x %d",
                    registry[i]->name, (int)h->m, (int)h->n);
  M = calloc(1, sizeof *M);
  if (!M) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating a preconditioner");
  M->ops = registry[i];
  M->ctx = ctx;
  M->n = h->m;
  GS_TRY(parse_options(M->ops, options, &M->cfg));
  GS_TRY(run_setup(M, A));
  *out = M;
  M = NULL;
cleanup:
  gs_precond_destroy(&M);
  return st;
}

gs_status_t gs_precond_create(gs_precond_t **out, gs_context_t *ctx, gs_matrix_t *A,
                              const char *name)
{
  return gs_precond_create_opts(out, ctx, A, name, NULL);
}

gs_status_t gs_precond_setup(gs_precond_t *M, gs_matrix_t *A)
{
  if (!M || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_setup: NULL argument");
  if (gs_matrix_context(A) != M->ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_setup: the matrix was created on another "
                    "context");
  const gs_csr_t *h = gs_matrix_host(A);
  if (h->m != M->n || h->n != M->n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_precond_setup: the matrix is %d x %d, the "
                    "preconditioner was set up for order %d", (int)h->m, (int)h->n, (int)M->n);
  GS_CHECK(gs_context_activate(M->ctx));
  GS_CHECK(GS_CUDA(cudaStreamSynchronize(M->ctx->stream))); /* no apply of the old data runs */
  M->ops->destroy(M->data);
  M->data = NULL;
  M->cfg.options = NULL;
  return run_setup(M, A);
}

gs_status_t gs_precond_set_near_null_space(gs_precond_t *M, int k, const double *B, int64_t ldb)
{
  if (!M) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_set_near_null_space: M is NULL");
  if (M->ops != &gs_precond_amg_ops)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "preconditioner %s takes no near-null space (amg does)",
                    M->ops->name);
  double *copy = NULL;
  if (k != 0) { /* checked now, so that the setups need not */
    GS_CHECK(gs_amg_near_null_check(M->n, k, B, ldb, "gs_precond_set_near_null_space"));
    copy = malloc((size_t)(M->n > 0 ? M->n : 1) * (size_t)k * sizeof *copy);
    if (!copy)
      return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory for %d near-null-space vectors",
                      k);
    for (int c = 0; c < k; ++c)
      memcpy(copy + (size_t)c * (size_t)M->n, B + (int64_t)c * ldb, (size_t)M->n * sizeof *B);
  }
  free(M->nns);
  M->nns = copy;
  M->nns_k = k;
  return GS_SUCCESS;
}

gs_status_t gs_precond_smooth(gs_precond_t *M, const double *d_b, double *d_x, int x_nonzero,
                              int sweeps)
{
  if (!M) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_smooth: M is NULL");
  if (sweeps < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_smooth: sweeps < 0");
  if (M->ops->version < 3 || !M->ops->smooth)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "preconditioner %s has no smoother", M->ops->name);
  if (M->n == 0 || sweeps == 0) return GS_SUCCESS;
  if (!d_b || !d_x || d_b == d_x)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_smooth: b or x is NULL, or the same vector");
  if (M->ops != &none_ops && !M->data)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_smooth: M has no setup (the last failed)");
  GS_CHECK(gs_context_activate(M->ctx));
  return M->ops->smooth(M->ctx, M->data, d_b, d_x, x_nonzero != 0, sweeps);
}

gs_status_t gs_precond_info(const gs_precond_t *M, gs_precond_info_t *out)
{
  if (!M || !out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_info: NULL argument");
  memset(out, 0, sizeof *out);
  if (M->ops->version >= 3 && M->ops->info && M->data) M->ops->info(M->data, out);
  return GS_SUCCESS;
}

int gs_precond_is_capturable(const gs_precond_t *M)
{
  if (!M) return 1;
  unsigned f = ops_flags(M->ops);
  if (M->ops->version >= 3 && M->ops->caps && M->data) f = M->ops->caps(M->data);
  return (f & GS_PRECOND_FLAG_CAPTURABLE) != 0;
}

void gs_precond_destroy(gs_precond_t **M)
{
  if (!M || !*M) return;
  if ((*M)->ops) {
    if ((*M)->ctx) gs_context_activate((*M)->ctx);
    (*M)->ops->destroy((*M)->data);
  }
  free((*M)->nns);
  free(*M);
  *M = NULL;
}

gs_status_t gs_precond_apply(gs_precond_t *M, const double *d_r, double *d_z)
{
  if (!M) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_apply: M is NULL");
  if (M->n == 0) return GS_SUCCESS;
  if (!d_r || !d_z) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_apply: r or z is NULL");
  GS_CHECK(gs_context_activate(M->ctx));
  if (M->ops != &none_ops && !M->data)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_apply: M has no setup (the last failed)");
  if (M->ops == &none_ops) {
    if (d_r == d_z) return GS_SUCCESS;
    return GS_CUDA(cudaMemcpyAsync(d_z, d_r, (size_t)M->n * sizeof(double),
                                   cudaMemcpyDeviceToDevice, M->ctx->stream));
  }
  return M->ops->apply(M->ctx, M->data, d_r, d_z);
}

const char *gs_precond_name(const gs_precond_t *M) { return M ? M->ops->name : ""; }
gs_idx_t gs_precond_size(const gs_precond_t *M) { return M ? M->n : 0; }
gs_context_t *gs_precond_context(const gs_precond_t *M) { return M ? M->ctx : NULL; }
int gs_precond_is_identity(const gs_precond_t *M) { return !M || M->ops == &none_ops; }
int gs_precond_is_symmetric(const gs_precond_t *M)
{
  if (!M) return 1;
  unsigned f = ops_flags(M->ops);
  if (M->ops->version >= 3 && M->ops->caps && M->data) f = M->ops->caps(M->data);
  return (f & GS_PRECOND_FLAG_SYMMETRIC) != 0;
}
double gs_precond_setup_seconds(const gs_precond_t *M) { return M ? M->setup_seconds : 0.0; }
const double *gs_precond_jacobi_dinv(const gs_precond_t *M)
{
  return M && M->ops == &gs_precond_jacobi_ops ? gs_jacobi_dinv(M->data) : NULL;
}
size_t gs_precond_device_bytes(const gs_precond_t *M)
{
  return M ? M->ops->device_bytes(M->data) : 0;
}
