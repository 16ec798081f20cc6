/* spmv/auto.c: the "auto" format: the rule stage (spmv/auto_rule.c) names a few candidates, the
 * measured stage prepares each, times a few products and keeps the one of least
 *   prepare + expected_products * t_spmv
 * (the amortisation the paper leaves as future work, section 5.3 item 3), and a cache keyed by
 * the matrix (pattern and values), the GPU's name, the package version, the options and the
 * candidates lets a second run of the same matrix skip the measuring: it stores the measured
 * times, not the choice, so that a run expecting another number of products decides anew.
 *
 * The product auto returns IS the chosen backend's (gs_spmv_t with that backend's ops and data,
 * plus the selection record): its results are that backend's bit for bit.
 *
 * Cache files are text, one per key, written to a temporary file in the same folder and renamed
 * into place (atomic on POSIX), so that concurrent runs never read half a file. A file that
 * does not parse is ignored with a warning in the record (the library never prints); a folder
 * that cannot be created or written costs a warning, never the selection. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "core/context_impl.h"
#include "core/error.h"
#include "gpusolve/bench.h"
#include "gpusolve/select.h"
#include "gpusolve/timer.h"
#include "gpusolve/version.h"
#include "spmv/auto_cache.h"
#include "spmv/spmv_impl.h"

void gs_select_opts_default(gs_select_opts_t *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->expected_products = 1000.0;
  o->use_cache = 1;
  o->warmup = 2;
  o->runs = 10;
}

/* Appends to the record's warnings ("; " between them), truncating what does not fit. */
static void warn(gs_selection_t *sel, const char *fmt, ...)
{
  size_t used = strlen(sel->warning);
  if (used + 3 >= sizeof sel->warning) return;
  if (used) used += (size_t)snprintf(sel->warning + used, sizeof sel->warning - used, "; ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sel->warning + used, sizeof sel->warning - used, fmt, ap);
  va_end(ap);
}

/* ---- cache ----------------------------------------------------------------------------------- */

gs_status_t gs_select_cache_dir(char *buf, size_t len)
{
  if (!buf || len == 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_select_cache_dir: no buffer");
  buf[0] = '\0';
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int n;
  if (xdg && xdg[0] == '/') /* the XDG spec: a relative path is invalid and ignored */
    n = snprintf(buf, len, "%s/gpusolve", xdg);
  else if (home && home[0])
    n = snprintf(buf, len, "%s/.cache/gpusolve", home);
  else
    return GS_ERROR(GS_ERR_INVALID_ARG, "no cache folder: neither XDG_CACHE_HOME nor HOME is set");
  if (n < 0 || (size_t)n >= len) {
    buf[0] = '\0';
    return GS_ERROR(GS_ERR_INVALID_ARG, "the cache folder's path is too long");
  }
  return GS_SUCCESS;
}

/* 64-bit hash of a byte string continuing from h: 8-byte words through a multiply-rotate step,
 * the tail byte by byte, then splitmix64's finaliser. Not cryptographic: the cache file also
 * records the matrix's hash, sizes, GPU and version, and a stale file costs only a wrong guess
 * of times, never a wrong product. */
static uint64_t mix(uint64_t h, uint64_t w)
{
  h ^= w * 0x9E3779B97F4A7C15ull;
  h = (h << 31) | (h >> 33);
  return h * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
}

static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
  const unsigned char *p = data;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = mix(h, w);
  }
  uint64_t tail = 0;
  for (size_t k = 0; i < len; ++i, ++k) tail |= (uint64_t)p[i] << (8 * k);
  h = mix(h, tail ^ ((uint64_t)len << 56));
  return h;
}

static uint64_t finish(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t gs_select_matrix_hash(const gs_csr_t *A)
{
  if (!A) return 0;
  int64_t dims[3] = {A->m, A->n, (int64_t)A->nnz};
  uint64_t h = hash_bytes(0x6770756E736F6C76ull, dims, sizeof dims);
  h = hash_bytes(h, A->row_ptr, ((size_t)A->m + 1) * sizeof *A->row_ptr);
  h = hash_bytes(h, A->col, (size_t)A->nnz * sizeof *A->col);
  h = hash_bytes(h, A->val, (size_t)A->nnz * sizeof *A->val);
  return finish(h);
}

/* The file of one key: the matrix, the GPU, the version, the options, the transpose need and
 * the candidate list (another list is another question). */
static void cache_file(const char *dir, const gs_select_key_t *k, const gs_select_rule_t *rule,
                       char *path, size_t len)
{
  uint64_t h = mix(k->matrix_hash, 1);
  h = hash_bytes(h, k->gpu, strlen(k->gpu));
  h = hash_bytes(h, gs_version(), strlen(gs_version()));
  h = hash_bytes(h, k->options, strlen(k->options));
  h = mix(h, (uint64_t)k->need_transpose);
  for (int c = 0; c < rule->n; ++c) h = hash_bytes(h, rule->names[c], strlen(rule->names[c]) + 1);
  snprintf(path, len, "%s/%016llx.sel", dir, (unsigned long long)finish(h));
}

#define CACHE_MAGIC "gpusolve-select 1"

/* Reads a line into buf without its newline; 0 at end of file or for a line too long. */
static int read_line(FILE *f, char *buf, size_t len)
{
  if (!fgets(buf, (int)len, f)) return 0;
  size_t n = strlen(buf);
  if (n == 0 || buf[n - 1] != '\n') return 0;
  buf[n - 1] = '\0';
  return 1;
}

/* "key value": 1 and *value when the line is that key. */
static int keyed(const char *line, const char *key, const char **value)
{
  size_t n = strlen(key);
  if (strncmp(line, key, n) != 0 || line[n] != ' ') return 0;
  *value = line + n + 1;
  return 1;
}

int gs_select_cache_load(const char *dir, const gs_select_key_t *k, const gs_select_rule_t *rule,
                         gs_selection_t *sel)
{
  char path[1024], line[1024];
  const char *v;
  int ok = 0, lineno = 0;
  if (!dir || !k || !rule || !sel) return 0;
  cache_file(dir, k, rule, path, sizeof path);
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno != ENOENT) warn(sel, "cannot read the selection cache file %s: %s", path,
                              strerror(errno));
    return 0;
  }
  char want_matrix[32];
  snprintf(want_matrix, sizeof want_matrix, "%016llx", (unsigned long long)k->matrix_hash);
  gs_select_time_t t[GS_SELECT_MAX];
  int same = 1, n = -1;
#define NEXT() (++lineno, read_line(f, line, sizeof line))
  if (!NEXT() || strcmp(line, CACHE_MAGIC) != 0) goto corrupt;
  if (!NEXT() || !keyed(line, "version", &v)) goto corrupt;
  same &= !strcmp(v, gs_version());
  if (!NEXT() || !keyed(line, "gpu", &v)) goto corrupt;
  same &= !strcmp(v, k->gpu);
  if (!NEXT() || !keyed(line, "matrix", &v)) goto corrupt;
  same &= !strcmp(v, want_matrix);
  if (!NEXT() || !keyed(line, "options", &v)) goto corrupt;
  same &= !strcmp(v, k->options);
  if (!NEXT() || !keyed(line, "transpose", &v) || (strcmp(v, "0") && strcmp(v, "1")))
    goto corrupt;
  same &= (v[0] == '1') == (k->need_transpose != 0);
  if (!NEXT() || !keyed(line, "candidates", &v)) goto corrupt;
  char *end = NULL;
  long cnt = strtol(v, &end, 10);
  if (end == v || *end || cnt < 1 || cnt > GS_SELECT_MAX) goto corrupt;
  n = (int)cnt;
  same &= n == rule->n;
  for (int c = 0; c < n; ++c) {
    char name[GS_SELECT_NAME + 1];
    int status = 0, used = 0;
    double prep = 0, spmv = 0;
    if (!NEXT()) goto corrupt;
    if (sscanf(line, "%32s %d %lg %lg%n", name, &status, &prep, &spmv, &used) != 4 ||
        line[used] != '\0' || strlen(name) >= GS_SELECT_NAME || !isfinite(prep) ||
        !isfinite(spmv) || prep < 0 || spmv < 0 || status > (int)GS_SELECT_DEFERRED)
      goto corrupt;
    if (c < rule->n) same &= !strcmp(name, rule->names[c]);
    snprintf(t[c].name, sizeof t[c].name, "%s", name);
    t[c].status = (gs_status_t)status;
    t[c].prepare_s = prep;
    t[c].spmv_s = spmv;
    t[c].cost_s = INFINITY;
  }
  if (!NEXT() || strcmp(line, "end") != 0) goto corrupt;
#undef NEXT
  if (same) { /* a stale file (another GPU, version, matrix by collision) is a plain miss */
    memcpy(sel->times, t, (size_t)n * sizeof *t);
    sel->ntimes = n;
    snprintf(sel->cache_file, sizeof sel->cache_file, "%s", path);
    ok = 1;
  }
  fclose(f);
  return ok;
corrupt:
  fclose(f);
  {
    char where[64];
    snprintf(where, sizeof where, "line %d", lineno);
    warn(sel, "ignoring the corrupt selection cache file %s (%s)", path, where);
  }
  return 0;
}

/* mkdir -p, mode 0755 for what it creates; 0 or an errno. */
static int make_dirs(const char *dir)
{
  char p[1024];
  if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return ENAMETOOLONG;
  for (char *s = p + 1;; ++s) {
    if (*s == '/' || *s == '\0') {
      const char c = *s;
      *s = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST) return errno;
      *s = c;
      if (!c) break;
    }
  }
  return 0;
}

void gs_select_cache_store(const char *dir, const gs_select_key_t *k,
                           const gs_select_rule_t *rule, gs_selection_t *sel)
{
  char path[1024], tmp[1100];
  if (!dir || !k || !rule || !sel || sel->ntimes != rule->n) return;
  int e = make_dirs(dir);
  if (e) {
    warn(sel, "cannot create the selection cache folder %s: %s", dir, strerror(e));
    return;
  }
  cache_file(dir, k, rule, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s/.sel.XXXXXX", dir);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    warn(sel, "cannot write the selection cache in %s: %s", dir, strerror(errno));
    return;
  }
  FILE *f = fdopen(fd, "w");
  if (!f) {
    e = errno;
    close(fd);
    unlink(tmp);
    warn(sel, "cannot write the selection cache in %s: %s", dir, strerror(e));
    return;
  }
  fprintf(f, "%s\nversion %s\ngpu %s\nmatrix %016llx\noptions %s\ntranspose %d\ncandidates %d\n",
          CACHE_MAGIC, gs_version(), k->gpu, (unsigned long long)k->matrix_hash, k->options,
          k->need_transpose ? 1 : 0, sel->ntimes);
  for (int c = 0; c < sel->ntimes; ++c)
    fprintf(f, "%s %d %.17g %.17g\n", sel->times[c].name, (int)sel->times[c].status,
            sel->times[c].status == GS_SUCCESS ? sel->times[c].prepare_s : 0.0,
            sel->times[c].status == GS_SUCCESS ? sel->times[c].spmv_s : 0.0);
  fprintf(f, "end\n");
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) {
    e = errno;
    unlink(tmp);
    warn(sel, "cannot write the selection cache file %s: %s", path, strerror(e ? e : EIO));
    return;
  }
  snprintf(sel->cache_file, sizeof sel->cache_file, "%s", path);
}

/* ---- the selection ----------------------------------------------------------------------------- */

/* Prepares candidate c (timed); on failure records it in t and returns the status. */
static gs_status_t prepare(gs_context_t *ctx, gs_matrix_t *A, const char *options,
                           gs_select_time_t *t, gs_spmv_t **S)
{
  gs_status_t st = gs_spmv_create_timed(S, ctx, A, t->name, options, &t->prepare_s);
  t->status = st;
  return st;
}

/* Measures every candidate; leaves the best prepared one in *best (or NULL when none ran). */
static gs_status_t measure(gs_context_t *ctx, gs_matrix_t *A, const char *options,
                           const gs_select_opts_t *o, gs_selection_t *sel, gs_spmv_t **best,
                           char *last_error, size_t lelen)
{
  gs_status_t st = GS_SUCCESS;
  const gs_csr_t *H = gs_matrix_host(A);
  const size_t len = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  double *h = NULL, *d_x = NULL, *d_y = NULL;
  int bi = -1;
  *best = NULL;
  h = malloc(len * sizeof *h);
  if (!h) return GS_ERROR(GS_ERR_HOST_MEMORY, "auto: out of host memory");
  for (size_t i = 0; i < len; ++i) h[i] = 1.0;
  GS_TRY(gs_dmalloc(ctx, (void **)&d_x, len * sizeof *d_x, "auto: x"));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_y, len * sizeof *d_y, "auto: y"));
  GS_TRY(gs_copy_to_device(ctx, d_x, h, len * sizeof *h));
  gs_spmv_time_opts_t to;
  gs_spmv_time_opts_default(&to);
  to.warmup = o->warmup;
  to.min_runs = o->runs;
  to.max_runs = o->runs;
  to.min_seconds = 0.0;
  to.max_seconds = 0.5; /* one very slow candidate stops after 10 products */
  /* The shared device CSR is uploaded once for every backend that reads it (and stays with the
   * matrix): the first such candidate would otherwise pay it alone (48 ms of 11M entries on
   * H100, more than its whole build) and lose to a format with its own layout. Uploaded and
   * timed here, recorded apart, charged to no candidate. A failure here is left to the
   * candidates' prepares to report. */
  int shared = 0;
  for (int c = 0; c < sel->rule.n; ++c) {
    const int b = gs_spmv_backend_find(sel->rule.names[c]);
    if (b >= 0 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_SHARED_CSR)) shared = 1;
  }
  if (shared) {
    gs_dcsr_t dcsr;
    const double t0 = gs_wall_seconds();
    if (gs_matrix_device_csr(A, &dcsr) == GS_SUCCESS && gs_context_sync(ctx) == GS_SUCCESS)
      sel->shared_csr_s = gs_wall_seconds() - t0;
  }
  sel->ntimes = sel->rule.n;
  for (int c = 0; c < sel->rule.n; ++c) {
    gs_select_time_t *t = &sel->times[c];
    gs_spmv_t *S = NULL;
    gs_spmv_timing_t tm;
    snprintf(t->name, sizeof t->name, "%s", sel->rule.names[c]);
    t->cost_s = INFINITY;
    if (prepare(ctx, A, options, t, &S) == GS_SUCCESS &&
        (t->status = gs_spmv_time(S, GS_OP_N, d_x, d_y, &to, &tm)) == GS_SUCCESS) {
      t->spmv_s = tm.median_s;
      t->cost_s = t->prepare_s + o->expected_products * t->spmv_s;
      if (bi < 0 || t->cost_s < sel->times[bi].cost_s) { /* ties: the better-ranked stays */
        gs_spmv_destroy(best);
        *best = S;
        S = NULL;
        bi = c;
      }
    }
    if (t->status != GS_SUCCESS)
      snprintf(last_error, lelen, "%s: %s", t->name, gs_last_error());
    gs_spmv_destroy(&S);
  }
cleanup:
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  free(h);
  if (st != GS_SUCCESS) gs_spmv_destroy(best);
  return st;
}

/* ---- the staged selection of a solve ------------------------------------------------------------
 *
 * A solve does not know its number of products before its first iterations, and a format's
 * build can cost more than a whole short solve (DIA of a 26M-entry Laplacian: 150-180 ms against
 * 17 ms of CG). So the solve starts at once with the rule's best light candidate (on the shared
 * device CSR, no build), and at each host check the solver passes its estimate of the products
 * left; gs_spmv_auto_revise then times the current format (once), switches to a candidate of
 * known times when that saves more than its prepare, or prepares and times ONE deferred
 * candidate whose predicted prepare is at most GS_SELECT_TRY_SHARE of the remaining SpMV time,
 * taking it when it is faster. A wasted try therefore costs at most that share of what was
 * left; the cache remembers every time measured, so a second solve of the matrix knows. */

/* The record and what the revisions need, freed by S with free(&state->sel). */
typedef struct auto_state {
  gs_selection_t sel; /* first member */
  int cache;          /* the cache is keyed (after the rule ran) and usable */
  int use_cache;      /* as asked */
  int need_transpose;
  int ruled;          /* the features and the rule have run (at a revision) */
  char dir[1024];     /* the cache folder asked for ("" for the default) */
  gs_select_key_t key;
  char options[1024];
} auto_state_t;

static int light(const char *name)
{
  const int b = gs_spmv_backend_find(name);
  return b >= 0 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_LIGHT);
}

/* Times S over a few products into t (status, spmv_s). */
static gs_status_t time_one(gs_spmv_t *S, gs_select_time_t *t)
{
  gs_status_t st = GS_SUCCESS;
  gs_context_t *ctx = gs_spmv_context(S);
  const gs_csr_t *H = gs_matrix_host(gs_spmv_matrix(S));
  const size_t len = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  double *d_x = NULL, *d_y = NULL;
  GS_TRY(gs_dmalloc(ctx, (void **)&d_x, len * sizeof *d_x, "auto: x"));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_y, len * sizeof *d_y, "auto: y"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_x, 0, len * sizeof *d_x, ctx->stream))); /* speed does not
                                                                        depend on x's values */
  gs_spmv_time_opts_t to;
  gs_spmv_time_opts_default(&to);
  to.warmup = 2;
  to.min_runs = to.max_runs = 10;
  to.min_seconds = 0.0;
  to.max_seconds = 0.1;
  gs_spmv_timing_t tm;
  GS_TRY(gs_spmv_time(S, GS_OP_N, d_x, d_y, &to, &tm));
  t->spmv_s = tm.median_s;
  t->status = GS_SUCCESS;
cleanup:
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  return st;
}

static void staged_store(auto_state_t *a)
{
  if (a->cache) gs_select_cache_store(a->dir, &a->key, &a->sel.rule, &a->sel);
}

/* The staged list: the rule's candidates, then the light formats it does not name (cheap to
 * try during the solve: the rule ranks formats by SpMV speed, not by whole solves, and may name
 * one light format or none), in the order of their whole-solve record on the H100 set
 * (bench/solve_auto.py, 2026-11): cusparse-csr, csr-vector, hola, cusparse-csr2, csr-scalar. */
static void staged_extend(gs_select_rule_t *r, int need_transpose)
{
  static const char *const light_order[] = {"cusparse-csr", "csr-vector", "hola", "cusparse-csr2",
                                            "csr-scalar"};
  for (size_t i = 0; i < sizeof light_order / sizeof *light_order && r->n < GS_SELECT_MAX; ++i) {
    const int b = gs_spmv_backend_find(light_order[i]);
    if (b < 0 || (need_transpose && !(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_TRANSPOSE)))
      continue;
    int have = 0;
    for (int c = 0; c < r->n; ++c) have |= !strcmp(r->names[c], light_order[i]);
    if (!have) snprintf(r->names[r->n++], sizeof r->names[0], "%s", light_order[i]);
  }
}

/* 1 when a cached record has candidates a staged selection never measured. */
static int any_deferred(const gs_selection_t *sel)
{
  for (int c = 0; c < sel->ntimes; ++c)
    if (sel->times[c].status == GS_SELECT_DEFERRED) return 1;
  return 0;
}

/* The staged record before its start: the cached times (hit) or every candidate deferred. */
static void staged_begin(gs_selection_t *sel, int hit)
{
  sel->staged = 1;
  sel->measured = 0;
  sel->cache = hit ? GS_SELECT_CACHE_HIT : sel->cache;
  if (!hit) {
    sel->ntimes = sel->rule.n;
    for (int c = 0; c < sel->rule.n; ++c) {
      snprintf(sel->times[c].name, sizeof sel->times[c].name, "%s", sel->rule.names[c]);
      sel->times[c].status = GS_SELECT_DEFERRED;
      sel->times[c].prepare_s = sel->times[c].spmv_s = 0.0;
    }
  }
  for (int c = 0; c < sel->ntimes; ++c) sel->times[c].cost_s = INFINITY;
}

/* The staged start: the light candidate of least known SpMV time (the cache's), else the rule's
 * first light one that prepares. GS_ERR_UNSUPPORTED when the list has no light candidate (the
 * caller then measures every candidate). */
static gs_status_t staged_start(gs_context_t *ctx, gs_matrix_t *A, auto_state_t *a, gs_spmv_t **S,
                                char *last_error, size_t lelen)
{
  gs_selection_t *sel = &a->sel;
  int order[GS_SELECT_MAX], n = 0;
  for (int c = 0; c < sel->rule.n; ++c)
    if (light(sel->rule.names[c])) order[n++] = c;
  if (n == 0) return GS_ERR_UNSUPPORTED;
  for (int i = 1; i < n; ++i) /* known times first, fastest first; the rule's order otherwise */
    for (int j = i; j > 0; --j) {
      const gs_select_time_t *p = &sel->times[order[j - 1]], *q = &sel->times[order[j]];
      const int swap = q->status == GS_SUCCESS &&
                       (p->status != GS_SUCCESS || q->spmv_s < p->spmv_s);
      if (!swap) break;
      const int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = 0; i < n && !*S; ++i) {
    gs_select_time_t *t = &sel->times[order[i]];
    if (t->status != GS_SUCCESS && t->status != GS_SELECT_DEFERRED) continue; /* failed before */
    const gs_status_t known = t->status;
    if (prepare(ctx, A, a->options, t, S) == GS_SUCCESS) {
      t->status = known; /* its SpMV time is measured at the first revision */
      sel->chosen = order[i];
    } else {
      snprintf(last_error, lelen, "%s: %s", t->name, gs_last_error());
    }
  }
  return GS_SUCCESS;
}

/* The first revision that can afford it runs the features, the rule and the cache lookup, which a
 * staged start skips (one O(nnz) pass, 1-2 ns per entry, plus the cache key's hash: on a 26M-entry
 * matrix 30-60 ms, more than many whole solves): the list becomes the rule's candidates then the
 * light formats, keeping the times measured so far; the cache fills in what it knows. */
static void staged_rule(auto_state_t *a, gs_spmv_t *S)
{
  gs_selection_t *sel = &a->sel;
  gs_matrix_t *A = gs_spmv_matrix(S);
  const gs_csr_t *H = gs_matrix_host(A);
  gs_select_rule_t r;
  a->ruled = 1;
  if (gs_select_features_with(H, gs_matrix_features(A), &sel->features) != GS_SUCCESS ||
      gs_select_rule(&sel->features, a->options, a->need_transpose, &r) != GS_SUCCESS)
    return; /* keep the light list */
  staged_extend(&r, a->need_transpose);
  gs_select_time_t t[GS_SELECT_MAX];
  int chosen = -1;
  for (int c = 0; c < r.n; ++c) {
    snprintf(t[c].name, sizeof t[c].name, "%s", r.names[c]);
    t[c].status = GS_SELECT_DEFERRED;
    t[c].prepare_s = t[c].spmv_s = 0.0;
    t[c].cost_s = INFINITY;
    for (int k = 0; k < sel->ntimes; ++k)
      if (!strcmp(sel->times[k].name, r.names[c])) {
        t[c] = sel->times[k];
        if (k == sel->chosen) chosen = c;
      }
  }
  if (chosen < 0) return; /* cannot happen: the running format is light, so listed */
  sel->rule = r;
  memcpy(sel->times, t, sizeof t);
  sel->ntimes = r.n;
  sel->chosen = chosen;
  if (!a->use_cache) return;
  if (!a->dir[0] && gs_select_cache_dir(a->dir, sizeof a->dir) != GS_SUCCESS) {
    warn(sel, "%s%s", gs_last_error(), " (the selection is not cached)");
    return;
  }
  const char *opt = a->options;
  if (strlen(opt) >= sizeof a->key.options) return; /* cannot key it */
  memset(&a->key, 0, sizeof a->key);
  a->key.matrix_hash = gs_select_matrix_hash(H);
  snprintf(a->key.gpu, sizeof a->key.gpu, "%s", gs_context_device_name(gs_spmv_context(S)));
  snprintf(a->key.options, sizeof a->key.options, "%s", opt);
  a->key.need_transpose = a->need_transpose;
  a->cache = 1;
  gs_selection_t *got = calloc(1, sizeof *got);
  if (got && gs_select_cache_load(a->dir, &a->key, &sel->rule, got)) {
    sel->cache = GS_SELECT_CACHE_HIT;
    snprintf(sel->cache_file, sizeof sel->cache_file, "%s", got->cache_file);
    for (int c = 0; c < sel->ntimes && c < got->ntimes; ++c)
      if (sel->times[c].status == GS_SELECT_DEFERRED) sel->times[c] = got->times[c];
  } else {
    sel->cache = GS_SELECT_CACHE_MISS;
    if (got && got->warning[0]) warn(sel, "%s", got->warning);
  }
  free(got);
}

gs_status_t gs_spmv_auto_revise(gs_spmv_t *S, long iterations, double remaining, int *switched)
{
  gs_status_t st = GS_SUCCESS;
  if (switched) *switched = 0;
  gs_selection_t *sel = gs_spmv_selection_mut(S);
  if (!sel || !sel->staged || sel->chosen < 0) return GS_SUCCESS;
  auto_state_t *a = (auto_state_t *)sel;
  const double t0 = gs_wall_seconds();
  gs_context_t *ctx = gs_spmv_context(S);
  gs_matrix_t *A = gs_spmv_matrix(S);
  gs_select_time_t *cur = &sel->times[sel->chosen];
  gs_spmv_t *C = NULL;
  sel->remaining_products = remaining;
  /* timing the current format costs about 12 products: only when they are a small share */
  if (cur->status != GS_SUCCESS && remaining < 12.0 / GS_SELECT_TRY_SHARE) goto done;
  if (cur->status != GS_SUCCESS) { /* the current format's time, once */
    if (time_one(S, cur) != GS_SUCCESS) {
      sel->staged = 0; /* cannot compare: keep what runs */
      goto done;
    }
    staged_store(a);
  }
  const double t_cur = cur->spmv_s;
  if (!a->ruled) { /* the rule and the cache, once the time left can carry them */
    const double nnz = (double)gs_matrix_host(A)->nnz;
    if (!gs_select_worth_trying(GS_SELECT_FEATURE_S_PER_NNZ * nnz, remaining, t_cur)) goto done;
    staged_rule(a, S);
    cur = &sel->times[sel->chosen];
  }
  /* a candidate of known times that pays for its prepare over what is left */
  int best = -1;
  double best_cost = remaining * t_cur;
  for (int c = 0; c < sel->ntimes; ++c) {
    const gs_select_time_t *t = &sel->times[c];
    if (c == sel->chosen || t->status != GS_SUCCESS ||
        !gs_select_worth_switching(t->prepare_s, t->spmv_s, t_cur, remaining))
      continue;
    const double cost = t->prepare_s + remaining * t->spmv_s;
    if (cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  if (best < 0) { /* else one deferred candidate worth its predicted prepare, in rule order */
    for (int c = 0; c < sel->ntimes && best < 0; ++c) {
      const gs_select_time_t *t = &sel->times[c];
      const int b = gs_spmv_backend_find(t->name);
      if (c != sel->chosen && t->status == GS_SELECT_DEFERRED && b >= 0 &&
          gs_select_worth_trying(gs_select_prepare_estimate(gs_spmv_backend_flags(b),
                                                            (double)gs_matrix_host(A)->nnz),
                                 remaining, t_cur))
        best = c;
    }
    if (best < 0) goto done;
  }
  gs_select_time_t *t = &sel->times[best];
  const int was_known = t->status == GS_SUCCESS;
  const double known_spmv = t->spmv_s;
  if (prepare(ctx, A, a->options, t, &C) != GS_SUCCESS) { /* status records the failure */
    staged_store(a);
    goto done;
  }
  if (!was_known) {
    sel->tried++;
    if (time_one(C, t) != GS_SUCCESS) {
      t->status = GS_ERR_CUDA;
      goto done;
    }
    staged_store(a);
  } else {
    t->spmv_s = known_spmv;
  }
  if (gs_select_worth_switching(0.0, t->spmv_s, t_cur, remaining) &&
      gs_spmv_take_backend(S, &C) == GS_SUCCESS) {
    sel->chosen = best;
    snprintf(sel->chosen_name, sizeof sel->chosen_name, "%s", t->name);
    sel->switches++;
    sel->switch_iteration = iterations;
    if (switched) *switched = 1;
  }
done:
  gs_spmv_destroy(&C);
  gs_clear_error();
  sel->progress_s += gs_wall_seconds() - t0;
  return st;
}

gs_status_t gs_spmv_create_auto(gs_spmv_t **out, gs_context_t *ctx, gs_matrix_t *A,
                                const char *options, const gs_select_opts_t *opts)
{
  gs_status_t st = GS_SUCCESS;
  gs_selection_t *sel = NULL;
  gs_spmv_t *S = NULL;
  gs_select_opts_t o;
  char last_error[512] = "", dir[1024] = "";
  const double t0 = gs_wall_seconds();
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: out is NULL");
  *out = NULL;
  if (!ctx || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: NULL argument");
  if (gs_matrix_context(A) != ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: the matrix was created on "
                    "another context");
  if (opts) o = *opts;
  else gs_select_opts_default(&o);
  if (!(o.expected_products > 0.0) || !isfinite(o.expected_products) || o.warmup < 0 ||
      o.runs < 1 || o.runs > 100000)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: need expected_products > 0 "
                    "(%g), warmup >= 0 (%d) and 1 <= runs <= 100000 (%d)", o.expected_products,
                    o.warmup, o.runs);
  /* its timings and the solves it serves apply double vectors */
  GS_CHECK(gs_spmv_options_refuse_float("auto", options));
  auto_state_t *as = calloc(1, sizeof *as);
  if (!as) return GS_ERROR(GS_ERR_HOST_MEMORY, "auto: out of host memory");
  sel = &as->sel;
  const gs_csr_t *H = gs_matrix_host(A);
  sel->expected_products = o.expected_products;
  sel->chosen = -1;
  int started = 0;
  /* staged: no features, rule or cache now (the first revision that can afford them runs them);
   * the options go with the record for the revisions' prepares */
  if (o.staged && !o.rule_only && strlen(options ? options : "") < sizeof as->options) {
    snprintf(as->options, sizeof as->options, "%s", options ? options : "");
    as->use_cache = o.use_cache;
    as->need_transpose = o.need_transpose;
    if (o.cache_dir) snprintf(as->dir, sizeof as->dir, "%s", o.cache_dir);
    sel->rule.row = "staged: the light formats; the rule runs at the solve's first revision";
    staged_extend(&sel->rule, o.need_transpose);
    staged_begin(sel, 0);
    if (staged_start(ctx, A, as, &S, last_error, sizeof last_error) == GS_SUCCESS && S)
      started = 1; /* gs_spmv_auto_revise goes on during the solve */
    else { /* no light format prepares: the measured stage below, from a clean record */
      memset(sel, 0, sizeof *sel);
      sel->chosen = -1;
      sel->expected_products = o.expected_products;
    }
  }
  if (!started) {
    GS_TRY(gs_select_features_with(H, gs_matrix_features(A), &sel->features)); /* cached */
    GS_TRY(gs_select_rule(&sel->features, options, o.need_transpose, &sel->rule));
  }

  gs_select_key_t key;
  memset(&key, 0, sizeof key);
  int cache = o.use_cache && !o.rule_only && !started;
  if (cache) {
    if (o.cache_dir) {
      snprintf(dir, sizeof dir, "%s", o.cache_dir);
    } else if (gs_select_cache_dir(dir, sizeof dir) != GS_SUCCESS) {
      warn(sel, "%s%s", gs_last_error(), " (the selection is not cached)");
      cache = 0;
    }
  }
  if (cache) {
    key.matrix_hash = gs_select_matrix_hash(H);
    snprintf(key.gpu, sizeof key.gpu, "%s", gs_context_device_name(ctx));
    snprintf(key.options, sizeof key.options, "%s", options ? options : "");
    key.need_transpose = o.need_transpose;
    if (strlen(options ? options : "") >= sizeof key.options) cache = 0; /* cannot key it */
  }

  if (started) {
  } else if (o.rule_only) { /* the rule's order, first that prepares */
    for (int c = 0; c < sel->rule.n && !S; ++c) {
      gs_select_time_t *t = &sel->times[c];
      snprintf(t->name, sizeof t->name, "%s", sel->rule.names[c]);
      t->cost_s = INFINITY;
      if (prepare(ctx, A, options, t, &S) == GS_SUCCESS) sel->chosen = c;
      else snprintf(last_error, sizeof last_error, "%s: %s", t->name, gs_last_error());
      sel->ntimes = c + 1;
    }
  } else if (cache && gs_select_cache_load(dir, &key, &sel->rule, sel) &&
             !any_deferred(sel)) {
    sel->cache = GS_SELECT_CACHE_HIT;
    sel->measured = 1;
    /* best cached cost first; a candidate that fails now is marked and the next one tried */
    int c;
    while ((c = gs_select_decide(sel->times, sel->ntimes, o.expected_products)) >= 0) {
      double prep = 0.0;
      gs_status_t ps = gs_spmv_create_timed(&S, ctx, A, sel->times[c].name, options, &prep);
      if (ps == GS_SUCCESS) {
        sel->chosen = c;
        break;
      }
      snprintf(last_error, sizeof last_error, "%s: %s", sel->times[c].name, gs_last_error());
      sel->times[c].status = ps;
    }
  } else {
    sel->cache = cache ? GS_SELECT_CACHE_MISS : GS_SELECT_CACHE_OFF;
    sel->measured = 1;
    GS_TRY(measure(ctx, A, options, &o, sel, &S, last_error, sizeof last_error));
    sel->chosen = gs_select_decide(sel->times, sel->ntimes, o.expected_products);
    if (S && cache) gs_select_cache_store(dir, &key, &sel->rule, sel);
  }
  if (!S || sel->chosen < 0)
    GS_FAIL(GS_ERR_UNSUPPORTED, "auto: none of the %d candidate formats could be prepared "
            "(last: %s)", sel->rule.n, last_error);
  snprintf(sel->chosen_name, sizeof sel->chosen_name, "%s", sel->rule.names[sel->chosen]);
  if (sel->staged) snprintf(sel->first_name, sizeof sel->first_name, "%s", sel->chosen_name);
  sel->seconds = gs_wall_seconds() - t0;
  gs_spmv_attach_selection(S, sel);
  sel = NULL;
  *out = S;
  S = NULL;
cleanup:
  gs_spmv_destroy(&S);
  free(sel);
  return st;
}
