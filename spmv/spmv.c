/* spmv/spmv.c: the registry queries, the backend options and the SpMV dispatcher: the one place
 * that calls through a backend's table, after validating its arguments (PETSc's MatMult).
 * The matrix object lives in spmv/matrix.c. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/spmv_impl.h"

struct gs_spmv {
  const gs_spmv_ops_t *ops;
  void *data;
  gs_context_t *ctx;
  gs_matrix_t *A;
  unsigned caps;
  char who[64]; /* "backend 'dia'": the subject of apply's error messages */
  char describe[256];
  struct gs_selection *sel; /* "auto": what was chosen and why (owned; select/auto.c) */
  unsigned generation; /* changes when a staged "auto" product takes another backend */
  gs_precision_t precision; /* chosen at prepare (the option string's precision) */
};

/* ---- registry ---------------------------------------------------------------------------- */

int gs_spmv_backend_count(void) { return gs_spmv_registry_count; }

static const gs_spmv_ops_t *backend(int i)
{
  return (i >= 0 && i < gs_spmv_registry_count) ? gs_spmv_registry[i] : NULL;
}

const char *gs_spmv_backend_name(int i) { return backend(i) ? backend(i)->name : NULL; }
const char *gs_spmv_backend_summary(int i) { return backend(i) ? backend(i)->summary : NULL; }
unsigned gs_spmv_backend_flags(int i) { return backend(i) ? backend(i)->flags : 0u; }

int gs_spmv_backend_find(const char *name)
{
  if (!name) return -1;
  for (int i = 0; i < gs_spmv_registry_count; ++i)
    if (strcmp(gs_spmv_registry[i]->name, name) == 0) return i;
  return -1;
}

static gs_status_t unknown_backend(const char *name)
{
  return GS_ERROR(GS_ERR_INVALID_ARG, "unknown SpMV format '%s' (see 'gpusolve spmv --list')",
                  name ? name : "(null)");
}

static int option_count(const gs_spmv_ops_t *ops)
{
  int k = 0;
  while (ops->options && ops->options[k].key) ++k;
  return k;
}

int gs_spmv_backend_option(int i, int k, gs_spmv_option_info_t *out)
{
  const gs_spmv_ops_t *ops = backend(i);
  if (!ops || !out || k < 0 || k >= option_count(ops)) return 0;
  const gs_spmv_option_t *o = &ops->options[k];
  out->key = o->key;
  out->help = o->help;
  out->def = o->def;
  out->min = o->min;
  out->max = o->max;
  out->integer = o->kind != GS_OPTK_REAL;
  return 1;
}

/* ---- option strings ----------------------------------------------------------------------
 * "key=value,backend.key=value,...": pairs are read in order; for backend `ops` (NULL: check
 * against every backend) each pair that names it, or names no backend and a key it declares,
 * sets that value. Every pair must be meant for some registered backend. */

static int option_find(const gs_spmv_ops_t *ops, const char *key, size_t len)
{
  for (int k = 0; ops->options && ops->options[k].key; ++k)
    if (strlen(ops->options[k].key) == len && strncmp(ops->options[k].key, key, len) == 0)
      return k;
  return -1;
}

static gs_status_t option_value(const gs_spmv_option_t *o, const char *pair, size_t plen,
                                const char *text, size_t len, double *out)
{
  char buf[64];
  if (len == 0 || len >= sizeof buf)
    return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': the value is %s", (int)plen, pair,
                    len ? "too long" : "missing");
  memcpy(buf, text, len);
  buf[len] = '\0';
  char *end = NULL;
  errno = 0;
  double v = strtod(buf, &end);
  if (end == buf || *end != '\0' || errno == ERANGE || !isfinite(v))
    return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': '%s' is not a number", (int)plen,
                    pair, buf);
  int ok = v >= o->min && v <= o->max;
  if (o->kind != GS_OPTK_REAL && v != floor(v)) ok = 0;
  if (o->kind == GS_OPTK_POW2 && v != 0.0 && ((long)v & ((long)v - 1)) != 0) ok = 0;
  if (!ok) {
    const char *what = o->kind == GS_OPTK_POW2 ? "0 or a power of two"
                       : o->kind == GS_OPTK_INT ? "an integer"
                                                : "a number";
    return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': %s must be %s in [%g, %g]",
                    (int)plen, pair, o->key, what, o->min, o->max);
  }
  *out = v;
  return GS_SUCCESS;
}

/* ---- precision (gpusolve/spmv.h) ---------------------------------------------------------- */

/* Mixed and float precision store the values as float: a finite value beyond FLT_MAX would
 * become an infinity, a silent wrong product, so such a matrix is refused, naming the first
 * entry. (Values below FLT_MIN lose relative accuracy as float subnormals; they stay within an
 * absolute 2^-150 of the double value, well under u_f of any normal entry of the row.) A
 * double precision has nothing to refuse. */
static gs_status_t refuse_float_range_at(const gs_csr_t *H, int64_t p, int precision)
{
  if (p < 0) return GS_SUCCESS;
  gs_idx_t lo = 0, hi = H->m - 1; /* the row holding entry p: row_ptr[i] <= p < row_ptr[i + 1] */
  while (lo < hi) {
    const gs_idx_t mid = lo + (hi - lo + 1) / 2;
    if (H->row_ptr[mid] <= (gs_off_t)p) lo = mid;
    else hi = mid - 1;
  }
  return GS_ERROR(GS_ERR_UNSUPPORTED, "%s precision: entry (%lld, %lld) = %g is beyond the "
                  "float range (%g); use double precision",
                  gs_precision_string((gs_precision_t)precision), (long long)lo + 1,
                  (long long)H->col[p] + 1, H->val[p], (double)FLT_MAX);
}

static gs_status_t refuse_float_range(const gs_csr_t *H, int precision)
{
  if (!H || precision == GS_PRECISION_DOUBLE) return GS_SUCCESS;
  return refuse_float_range_at(H, gs_csr_float_range_first(H), precision);
}

static const char *const precision_names[] = {"double", "mixed", "float"};
#define N_PRECISIONS ((int)(sizeof precision_names / sizeof *precision_names))

const char *gs_precision_string(gs_precision_t p)
{
  return ((int)p >= 0 && (int)p < N_PRECISIONS) ? precision_names[p] : "unknown";
}

int gs_precision_find(const char *name)
{
  for (int i = 0; name && i < N_PRECISIONS; ++i)
    if (!strcmp(name, precision_names[i])) return i;
  return -1;
}

/* The generic options every backend receives, resolved by spmv.c (no backend may declare
 * them): "[backend.]precision=double|mixed|float" and "[backend.]build=device|host". */
static const char *const build_names[] = {"device", "host"};
static const struct {
  const char *key;
  const char *const *names;
  int count;
  const char *choices; /* for the message */
} GENERIC[] = {
    {GS_SPMV_PRECISION_KEY, precision_names, N_PRECISIONS, "double, mixed or float"},
    {GS_SPMV_BUILD_KEY, build_names, 2, "device or host"},
};
#define N_GENERIC ((int)(sizeof GENERIC / sizeof *GENERIC))

static void generic_set(gs_spmv_cfg_t *cfg, int g, int value)
{
  if (g == 0) cfg->precision = value;
  else cfg->build = value;
}

/* Generic pair g, "[backend.]KEY=VALUE" (pair p of plen characters; blen > 0: the backend name
 * that starts it): validated whatever ops is, applied to cfg when it names ops or no backend.
 * Whether the backend takes the value is gs_spmv_create's check (refuse_precision), so that a
 * refusal names the backend. */
static gs_status_t generic_pair(int g, const char *p, size_t plen, size_t blen, const char *val,
                                size_t vlen, const gs_spmv_ops_t *ops, gs_spmv_cfg_t *cfg)
{
  int v = -1;
  for (int i = 0; i < GENERIC[g].count; ++i)
    if (strlen(GENERIC[g].names[i]) == vlen && !strncmp(val, GENERIC[g].names[i], vlen)) v = i;
  if (v < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': the %s must be %s", (int)plen, p,
                    GENERIC[g].key, GENERIC[g].choices);
  int named = 0; /* the backend the pair names (blen > 0) */
  for (int i = 0; blen > 0 && i < gs_spmv_registry_count; ++i)
    if (strlen(gs_spmv_registry[i]->name) == blen && !strncmp(gs_spmv_registry[i]->name, p, blen))
      named = 1;
  if (blen > 0 && !named)
    return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': unknown backend '%.*s'", (int)plen,
                    p, (int)blen, p);
  if (ops && cfg && (blen == 0 || (strlen(ops->name) == blen && !strncmp(ops->name, p, blen))))
    generic_set(cfg, g, v);
  return GS_SUCCESS;
}

/* A precision the backend has no kernels for: refused, never run in double instead. A FLOAT
 * backend without its float slot is a bug of the backend (the SQLite rule: a slot appended in
 * version 3 is read only from tables of version 3 on). */
static gs_status_t refuse_precision(const gs_spmv_ops_t *ops, int precision)
{
  if (precision == GS_PRECISION_DOUBLE) return GS_SUCCESS;
  if (precision == GS_PRECISION_MIXED && (ops->flags & GS_SPMV_FLAG_MIXED)) return GS_SUCCESS;
  if (precision == GS_PRECISION_FLOAT && (ops->flags & GS_SPMV_FLAG_FLOAT)) {
    if (ops->version >= 3 && ops->apply_f32) return GS_SUCCESS;
    return GS_ERROR(GS_ERR_INTERNAL, "backend '%s' is flagged float but has no float apply",
                    ops->name);
  }
  const char *name = gs_precision_string((gs_precision_t)precision);
  return GS_ERROR(GS_ERR_UNSUPPORTED, "backend '%s' has no %s-precision kernels (those that "
                  "have: '%s' in gpusolve spmv --list --verbose)", ops->name, name, name);
}

/* Applies `options` to the option table of `ops` (cfg may be NULL when only checking), or, with
 * ops == NULL, checks every pair against the whole registry. */
static gs_status_t options_apply(const char *options, const gs_spmv_ops_t *ops, gs_spmv_cfg_t *cfg)
{
  if (ops && cfg) {
    for (int k = 0; k < option_count(ops) && k < GS_SPMV_MAX_OPTIONS; ++k)
      cfg->v[k] = ops->options[k].def;
  }
  for (const char *p = options ? options : ""; *p;) {
    while (*p == ',' || isspace((unsigned char)*p)) ++p;
    if (!*p) break;
    const char *end = strchr(p, ',');
    size_t plen = end ? (size_t)(end - p) : strlen(p);
    while (plen > 0 && isspace((unsigned char)p[plen - 1])) --plen;
    const char *eq = memchr(p, '=', plen);
    if (!eq)
      return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': expected key=value", (int)plen, p);
    /* the key is [backend.]name: backend names hold no '.', so the last '.' splits them */
    const char *dot = NULL;
    for (const char *q = p; q < eq; ++q)
      if (*q == '.') dot = q;
    const char *key = dot ? dot + 1 : p;
    size_t klen = (size_t)(eq - key), blen = dot ? (size_t)(dot - p) : 0;
    const char *val = eq + 1;
    size_t vlen = plen - (size_t)(val - p);
    int g = -1;
    for (int k = 0; k < N_GENERIC; ++k)
      if (klen == strlen(GENERIC[k].key) && !strncmp(key, GENERIC[k].key, klen)) g = k;
    if (g >= 0) {
      GS_CHECK(generic_pair(g, p, plen, dot ? blen : 0, val, vlen, ops, cfg));
      p += end ? (size_t)(end - p) : strlen(p);
      continue;
    }
    int meant = 0; /* some backend takes this pair */
    for (int i = 0; i < gs_spmv_registry_count; ++i) {
      const gs_spmv_ops_t *b = gs_spmv_registry[i];
      if (dot && !(strlen(b->name) == blen && strncmp(b->name, p, blen) == 0)) continue;
      int k = option_find(b, key, klen);
      if (dot && k < 0)
        return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': backend '%s' has no option "
                        "'%.*s' (see 'gpusolve spmv --list --verbose')", (int)plen, p, b->name,
                        (int)klen, key);
      if (k < 0) continue;
      meant = 1;
      double v = 0.0;
      GS_CHECK(option_value(&b->options[k], p, plen, val, vlen, &v)); /* checked for all */
      if (b == ops && cfg) cfg->v[k] = v;
    }
    if (!meant) {
      if (dot)
        return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': unknown backend '%.*s'",
                        (int)plen, p, (int)blen, p);
      return GS_ERROR(GS_ERR_INVALID_ARG, "SpMV option '%.*s': no backend has an option '%.*s' "
                      "(see 'gpusolve spmv --list --verbose')", (int)plen, p, (int)klen, key);
    }
    p += end ? (size_t)(end - p) : strlen(p);
  }
  return GS_SUCCESS;
}

gs_status_t gs_spmv_options_check(const char *options) { return options_apply(options, NULL, NULL); }

gs_status_t gs_spmv_options_refuse_float(const char *who, const char *options)
{
  GS_CHECK(gs_spmv_options_check(options));
  for (int i = 0; i < gs_spmv_registry_count; ++i) {
    gs_spmv_cfg_t cfg;
    memset(&cfg, 0, sizeof cfg);
    GS_CHECK(options_apply(options, gs_spmv_registry[i], &cfg));
    if (cfg.precision == GS_PRECISION_FLOAT)
      return GS_ERROR(GS_ERR_UNSUPPORTED, "%s: precision=float products take float vectors "
                      "(gs_spmv_apply_float), and %s applies double ones: use double or mixed "
                      "precision, or name a format", who, who);
  }
  return GS_SUCCESS;
}

gs_status_t gs_spmv_option_resolve(int b, const char *options, const char *key, double *value,
                                   int *has)
{
  gs_spmv_cfg_t cfg;
  const gs_spmv_ops_t *ops = backend(b);
  if (!ops || !key || !value || !has)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_option_resolve: bad argument");
  memset(&cfg, 0, sizeof cfg);
  GS_CHECK(options_apply(options, ops, &cfg));
  const int k = option_find(ops, key, strlen(key));
  *has = k >= 0;
  *value = k >= 0 ? cfg.v[k] : 0.0;
  return GS_SUCCESS;
}

/* The capabilities a backend starts from before its prepare refines them. */
static unsigned default_caps(const gs_spmv_ops_t *ops)
{
  unsigned c = GS_SPMV_CAP_CAPTURABLE | GS_SPMV_CAP_DETERMINISTIC;
  if (ops->flags & GS_SPMV_FLAG_TRANSPOSE) c |= GS_SPMV_CAP_TRANSPOSE | GS_SPMV_CAP_DETERMINISTIC_T;
  return c;
}

/* A matrix whose offsets need 64 bits reaches only the backends built for them
 * (GS_SPMV_FLAG_WIDE); the others keep 32-bit entry positions in their layouts. */
static gs_status_t refuse_wide(const gs_spmv_ops_t *ops, gs_off_t nnz)
{
  return GS_ERROR(GS_ERR_UNSUPPORTED, "backend '%s' takes at most 2^31-1 entries (32-bit "
                  "offsets) and the matrix has %lld; use a backend with 64-bit offsets "
                  "(`gpusolve spmv --list --verbose` marks them 'wide')", ops->name, (long long)nnz);
}

/* ---- prepared products ------------------------------------------------------------------- */

gs_status_t gs_spmv_create(gs_spmv_t **out, gs_context_t *ctx, gs_matrix_t *A, const char *name,
                           const char *options)
{
  gs_status_t st = GS_SUCCESS;
  gs_spmv_cfg_t cfg;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create: out is NULL");
  *out = NULL;
  if (!ctx || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create: NULL argument");
  if (gs_matrix_context(A) != ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create: the matrix was created on another "
                    "context");
  if (name && !strcmp(name, "auto")) /* the selection is a layer above the backends */
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create: 'auto' is not a backend: the automatic "
                    "selection is gs_spmv_create_auto (gpusolve/select.h)");
  int i = gs_spmv_backend_find(name);
  if (i < 0) return unknown_backend(name);
  memset(&cfg, 0, sizeof cfg);
  GS_CHECK(options_apply(options, gs_spmv_registry[i], &cfg));
  gs_off_t a_nnz = 0;
  gs_matrix_dims(A, NULL, NULL, &a_nnz);
  if (gs_matrix_wide(A) && !(gs_spmv_registry[i]->flags & GS_SPMV_FLAG_WIDE))
    return refuse_wide(gs_spmv_registry[i], a_nnz);
  GS_CHECK(refuse_precision(gs_spmv_registry[i], cfg.precision));
  /* a matrix formed on the GPU gets its host copy unless the backend reads none */
  if (!(gs_spmv_registry[i]->flags & GS_SPMV_FLAG_NO_HOST) || cfg.precision != GS_PRECISION_DOUBLE ||
      gs_cfg_host_build(&cfg))
    GS_CHECK(gs_matrix_host_ready(A));
  GS_CHECK(gs_context_activate(ctx));
  if (cfg.precision != GS_PRECISION_DOUBLE) { /* on ctx's GPU where the shared CSR is there */
    int64_t p = -1;
    GS_CHECK(gs_matrix_float_range_first(A, &p));
    GS_CHECK(refuse_float_range_at(gs_matrix_host(A), p, cfg.precision));
  }
  gs_spmv_t *S = calloc(1, sizeof *S);
  if (!S) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating an SpMV");
  S->ops = gs_spmv_registry[i];
  S->ctx = ctx;
  S->A = A;
  S->caps = default_caps(S->ops);
  S->precision = (gs_precision_t)cfg.precision;
  snprintf(S->who, sizeof S->who, "backend '%s'", S->ops->name);
  GS_TRY(S->ops->prepare(ctx, A, &cfg, &S->data, &S->caps));
  if (S->ops->describe) S->ops->describe(S->data, S->describe, sizeof S->describe);
  if (S->precision != GS_PRECISION_DOUBLE) { /* say so wherever the layout is described */
    const size_t used = strlen(S->describe);
    snprintf(S->describe + used, sizeof S->describe - used, "%s%s", used ? "; " : "",
             S->precision == GS_PRECISION_MIXED ? "mixed precision (float values)"
                                                : "float precision (float values and vectors)");
  }
  *out = S;
  S = NULL;
cleanup:
  gs_spmv_destroy(&S);
  return st;
}

void gs_spmv_destroy(gs_spmv_t **S)
{
  if (!S || !*S) return;
  if ((*S)->ops && (*S)->data) {
    gs_context_activate((*S)->ctx);
    (*S)->ops->destroy((*S)->data);
  }
  free((*S)->sel);
  free(*S);
  *S = NULL;
}

unsigned gs_spmv_caps(const gs_spmv_t *S) { return S ? S->caps : 0u; }

void gs_spmv_attach_selection(gs_spmv_t *S, struct gs_selection *sel)
{
  free(S->sel);
  S->sel = sel;
}


struct gs_selection *gs_spmv_selection_mut(gs_spmv_t *S) { return S ? S->sel : NULL; }

unsigned gs_spmv_generation(const gs_spmv_t *S) { return S ? S->generation : 0u; }

gs_status_t gs_spmv_take_backend(gs_spmv_t *S, gs_spmv_t **from)
{
  if (!S || !from || !*from || (*from)->A != S->A || (*from)->ctx != S->ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_take_backend: not a product of the same matrix");
  /* what a solver may rely on mid-solve: a graph of the product, and A^T x */
  if ((*from)->precision != S->precision)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_take_backend: %s is in %s precision, %s in %s",
                    (*from)->who, gs_precision_string((*from)->precision), S->who,
                    gs_precision_string(S->precision));
  const unsigned need = S->caps & (GS_SPMV_CAP_CAPTURABLE | GS_SPMV_CAP_TRANSPOSE);
  if (((*from)->caps & need) != need)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_spmv_take_backend: %s lacks a capability of %s",
                    (*from)->who, S->who);
  gs_spmv_t *F = *from;
  if (S->ops && S->data) {
    gs_context_activate(S->ctx);
    S->ops->destroy(S->data);
  }
  S->ops = F->ops;
  S->data = F->data;
  S->caps = F->caps;
  memcpy(S->who, F->who, sizeof S->who);
  memcpy(S->describe, F->describe, sizeof S->describe);
  S->generation++;
  free(F->sel);
  free(F);
  *from = NULL;
  return GS_SUCCESS;
}

int gs_spmv_supports(const gs_spmv_t *S, gs_op_t op)
{
  if (!S) return 0;
  return op == GS_OP_N || (op == GS_OP_T && (S->caps & GS_SPMV_CAP_TRANSPOSE));
}

gs_status_t gs_apply_check(const char *who, gs_idx_t rows, gs_idx_t cols, int has_t, gs_op_t op,
                           double alpha, const void *d_x, double beta, const void *d_y,
                           gs_idx_t *out_len)
{
  *out_len = 0;
  if (op != GS_OP_N && op != GS_OP_T)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: op must be GS_OP_N or GS_OP_T", who);
  if (op == GS_OP_T && !has_t)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "%s has no transpose apply", who);
  const gs_idx_t in = op == GS_OP_N ? cols : rows, out = op == GS_OP_N ? rows : cols;
  if ((in > 0 && !d_x) || (out > 0 && !d_y))
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: x or y is NULL", who);
  if (d_x && d_x == d_y)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: x and y must be different vectors", who);
  if (!isfinite(alpha) || !isfinite(beta))
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: alpha and beta must be finite", who);
  *out_len = out;
  return GS_SUCCESS;
}

/* gs_spmv_apply and gs_spmv_dispatch on a float product: its vectors are float. */
static gs_status_t refuse_float_product(const gs_spmv_t *S)
{
  return GS_ERROR(GS_ERR_INVALID_ARG, "%s was prepared in float precision: use "
                  "gs_spmv_apply_float (float vectors)", S->who);
}

gs_status_t gs_spmv_apply(gs_spmv_t *S, gs_op_t op, double alpha, const double *d_x, double beta,
                          double *d_y)
{
  gs_idx_t outn;
  if (!S) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_apply: S is NULL");
  if (S->precision == GS_PRECISION_FLOAT) return refuse_float_product(S);
  gs_idx_t am = 0, an = 0;
  gs_matrix_dims(S->A, &am, &an, NULL);
  GS_CHECK(gs_apply_check(S->who, am, an, gs_spmv_supports(S, GS_OP_T), op, alpha, d_x, beta,
                          d_y, &outn));
  if (outn == 0) return GS_SUCCESS;
  GS_CHECK(gs_context_activate(S->ctx));
  /* BLAS rule, one place for every backend: alpha = 0 reads neither A nor x (NaN in x does not
   * reach y), so y = beta*y (y = 0 when beta = 0). */
  if (alpha == 0.0) return gs_launch_scale(S->ctx->stream, outn, beta, d_y);
  return gs_spmv_dispatch(S, op, alpha, d_x, beta, d_y);
}

gs_status_t gs_spmv_dispatch(gs_spmv_t *S, gs_op_t op, double alpha, const double *d_x,
                             double beta, double *d_y)
{
  if (S->precision == GS_PRECISION_FLOAT) return refuse_float_product(S);
  return S->ops->apply(S->ctx, S->data, op, alpha, d_x, beta, d_y);
}

gs_status_t gs_spmv_apply_float(gs_spmv_t *S, gs_op_t op, float alpha, const float *d_x,
                                float beta, float *d_y)
{
  gs_idx_t outn;
  if (!S) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_apply_float: S is NULL");
  if (S->precision != GS_PRECISION_FLOAT)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s was prepared in %s precision: gs_spmv_apply_float "
                    "takes products prepared with precision=float (use gs_spmv_apply)", S->who,
                    gs_precision_string(S->precision));
  gs_idx_t am = 0, an = 0;
  gs_matrix_dims(S->A, &am, &an, NULL);
  GS_CHECK(gs_apply_check(S->who, am, an, gs_spmv_supports(S, GS_OP_T), op, alpha, d_x, beta,
                          d_y, &outn));
  if (outn == 0) return GS_SUCCESS;
  GS_CHECK(gs_context_activate(S->ctx));
  /* the BLAS rule of gs_spmv_apply, in float: A and x unread */
  if (alpha == 0.0f) return gs_launch_scale_f32(S->ctx->stream, outn, beta, d_y);
  return S->ops->apply_f32(S->ctx, S->data, op, alpha, d_x, beta, d_y);
}

gs_status_t gs_spmv_memory(const gs_spmv_t *S, gs_spmv_mem_t *mem)
{
  if (!S || !mem) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_memory: NULL argument");
  memset(mem, 0, sizeof *mem);
  GS_CHECK(S->ops->memory(S->data, mem));
  if (!(S->caps & GS_SPMV_CAP_TRANSPOSE)) mem->bytes_per_apply_t = 0;
  return GS_SUCCESS;
}

const char *gs_spmv_name(const gs_spmv_t *S) { return S ? S->ops->name : ""; }
gs_value_type_t gs_spmv_value_type(const gs_spmv_t *S)
{
  /* the vectors' type: double in double and mixed precision (mixed stores float values) */
  return S && S->precision == GS_PRECISION_FLOAT ? GS_VALUE_FLOAT : GS_VALUE_DOUBLE;
}
gs_precision_t gs_spmv_precision(const gs_spmv_t *S)
{
  return S ? S->precision : GS_PRECISION_DOUBLE;
}
gs_matrix_t *gs_spmv_matrix(const gs_spmv_t *S) { return S ? S->A : NULL; }
gs_context_t *gs_spmv_context(const gs_spmv_t *S) { return S ? S->ctx : NULL; }
const char *gs_spmv_describe(const gs_spmv_t *S) { return S ? S->describe : ""; }

/* Plain CSR on the values rounded to float, double x, y and sums: what the CSR kernels of a
 * mixed product compute (row by row for op N; op T scales y, then adds entry by entry, as
 * their atomics do in some order), and the layout of a float product (whose kernels sum in
 * float). alpha != 0 (the caller's BLAS rule handles 0). */
static gs_status_t csr_spmv_host_mixed(const gs_csr_t *A, gs_op_t op, double alpha,
                                       const double *x, double beta, double *y)
{
  if (op == GS_OP_N) {
    for (gs_idx_t i = 0; i < A->m; ++i) {
      double s = 0.0;
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
        s += (double)(float)A->val[p] * x[A->col[p]];
      y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
    return GS_SUCCESS;
  }
  for (gs_idx_t j = 0; j < A->n; ++j) y[j] = beta == 0.0 ? 0.0 : beta * y[j];
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const double ax = alpha * x[i];
    if (ax == 0.0) continue; /* as the kernels: no 0 * Inf from a zero x entry */
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      y[A->col[p]] += (double)(float)A->val[p] * ax;
  }
  return GS_SUCCESS;
}

gs_status_t gs_spmv_host_apply(const char *name, const gs_csr_t *A, const char *options,
                               gs_op_t op, double alpha, const double *x, double beta, double *y)
{
  gs_spmv_cfg_t cfg;
  int i = gs_spmv_backend_find(name);
  if (i < 0) return unknown_backend(name);
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_host_apply: A is NULL");
  if (op != GS_OP_N && op != GS_OP_T)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_host_apply: op must be GS_OP_N or GS_OP_T");
  GS_CHECK(gs_csr_validate(A)); /* the host layouts trust their CSR as the device ones do */
  const gs_idx_t in = op == GS_OP_N ? A->n : A->m, outn = op == GS_OP_N ? A->m : A->n;
  if ((in > 0 && !x && alpha != 0.0) || (outn > 0 && !y))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_host_apply: x or y is NULL");
  if (!isfinite(alpha) || !isfinite(beta))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_host_apply: alpha and beta must be finite");
  memset(&cfg, 0, sizeof cfg);
  GS_CHECK(options_apply(options, gs_spmv_registry[i], &cfg));
  const gs_spmv_ops_t *ops = gs_spmv_registry[i];
  if (op == GS_OP_T && !(ops->flags & GS_SPMV_FLAG_TRANSPOSE))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "backend '%s' has no transpose apply", ops->name);
  if (A->nnz > INT32_MAX && !(ops->flags & GS_SPMV_FLAG_WIDE)) return refuse_wide(ops, A->nnz);
  GS_CHECK(refuse_precision(ops, cfg.precision));
  GS_CHECK(refuse_float_range(A, cfg.precision));
  /* Host layouts follow gs_spmv_apply's rules, alpha = 0 included (A and x not read), and
   * refuse what prepare would refuse whatever alpha is. Mixed and float share the layout of
   * float values (gs_cfg_float_values). */
  if (!ops->host_apply) {
    if (gs_cfg_float_values(&cfg) && alpha != 0.0)
      return csr_spmv_host_mixed(A, op, alpha, x, beta, y);
    return gs_csr_spmv_host(A, op, alpha, x, beta, y);
  }
  return ops->host_apply(A, &cfg, op, alpha, x, beta, y);
}
