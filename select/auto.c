/* select/auto.c: the "auto" format. The rule stage (select/rule.c) names candidates; the pool
 * adds every format that needs no layout of its own and every one built on the GPU; the
 * measured stage prepares and times the pool's candidates, light ones first, skipping one whose
 * predicted prepare plus the products at its byte-model bound cannot beat the best so far, and
 * keeps the one of least
 *   prepare + expected_n * t_N + expected_t * t_T
 * (the amortisation the paper leaves as future work, section 5.3 item 3). A cache keyed by the
 * matrix (pattern and values), the GPU's name, the package version and the options holds the
 * measured times of every format and op, so that spmv, select and solve reuse each other's.
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
#include "core/parallel.h"
#include "core/error.h"
#include "gpusolve/bench.h"
#include "gpusolve/select.h"
#include "gpusolve/timer.h"
#include "gpusolve/version.h"
#include "select/hash.h"
#include "select/select_impl.h"
#include "spmv/features_dev.h" /* gs_matrix_select_features */
#include "spmv/spmv_impl.h"

const gs_selection_t *gs_spmv_selection(const gs_spmv_t *S)
{
  return gs_spmv_selection_mut((gs_spmv_t *)S);
}

void gs_select_opts_default(gs_select_opts_t *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->expected_products = 1000.0;
  o->use_cache = 1;
  o->warmup = 2;
  o->runs = 10; /* GS_SELECT_MEASURE_PRODUCTS a candidate's op */
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

/* 64-bit hash of a byte string (the cache file's name from its key's strings) continuing from
 * h: 8-byte words through the matrix hash's step (select/hash.h), the tail byte by byte. */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
  const unsigned char *p = data;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = gs_hash_mix(h, w);
  }
  uint64_t tail = 0;
  for (size_t k = 0; i < len; ++i, ++k) tail |= (uint64_t)p[i] << (8 * k);
  return gs_hash_mix(h, tail ^ ((uint64_t)len << 56));
}

static uint64_t finish(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The matrix's hash from its sizes and its blocks' hashes (select/hash.h), the host's and the
 * GPU's alike. */
static uint64_t hash_seed(int64_t m, int64_t n, int64_t nnz)
{
  return gs_hash_mix(gs_hash_mix(gs_hash_mix(0x6770756E736F6C76ull, (uint64_t)m), (uint64_t)n),
                     (uint64_t)nnz);
}

static uint64_t hash_fold(int64_t m, int64_t n, int64_t nnz, const uint64_t *blocks, uint64_t nb)
{
  uint64_t h = hash_seed(m, n, nnz);
  for (uint64_t b = 0; b < nb; ++b) h = gs_hash_mix(h, blocks[b]);
  return finish(h);
}

typedef struct {
  const gs_csr_t *A;
  uint64_t first[4];
  uint64_t *out;
  int nt;
} hash_job_t;

/* word i of stream k (select/hash.h) */
static uint64_t host_word(const gs_csr_t *A, int k, int64_t i)
{
  if (k == 0) return (uint64_t)(int64_t)A->row_ptr[i];
  if (k == 1) return (uint64_t)(uint32_t)A->col[i];
  uint64_t w;
  memcpy(&w, &A->val[i], sizeof w);
  return w;
}

/* Block b's hash (blocks numbered across the streams): 32 independent chains, as a warp's lanes
 * run them on the GPU. */
static uint64_t hash_block(const hash_job_t *J, uint64_t b)
{
  const gs_csr_t *A = J->A;
  int k = 0;
  while (b >= J->first[k + 1]) ++k;
  const int64_t words = k == 0 ? (int64_t)A->m + 1 : (int64_t)A->nnz;
  const int64_t base = (int64_t)(b - J->first[k]) * GS_HASH_BLOCK_WORDS;
  const int64_t cnt = words - base < GS_HASH_BLOCK_WORDS ? words - base : GS_HASH_BLOCK_WORDS;
  uint64_t l[GS_HASH_LANES];
  for (int j = 0; j < GS_HASH_LANES; ++j) l[j] = gs_hash_lane_seed(b, j);
  int64_t i = 0;
  if (k == 1) { /* the streams' full rounds without the per-word branch */
    const gs_idx_t *c = A->col + base;
    for (; i + GS_HASH_LANES <= cnt; i += GS_HASH_LANES)
      for (int j = 0; j < GS_HASH_LANES; ++j)
        l[j] = gs_hash_mix(l[j], (uint64_t)(uint32_t)c[i + j]);
  } else if (k == 2) {
    const gs_val_t *v = A->val + base;
    for (; i + GS_HASH_LANES <= cnt; i += GS_HASH_LANES)
      for (int j = 0; j < GS_HASH_LANES; ++j) {
        uint64_t w;
        memcpy(&w, &v[i + j], sizeof w);
        l[j] = gs_hash_mix(l[j], w);
      }
  }
  for (; i < cnt; ++i) { /* the rows' words, and the other streams' last partial round */
    const int j = (int)(i % GS_HASH_LANES);
    l[j] = gs_hash_mix(l[j], host_word(A, k, base + i));
  }
  return gs_hash_block_fold((uint64_t)cnt, l);
}

static void hash_share(void *arg, int t)
{
  const hash_job_t *J = arg;
  const uint64_t nb = J->first[3];
  const uint64_t lo = nb * (uint64_t)t / (uint64_t)J->nt;
  const uint64_t hi = nb * (uint64_t)(t + 1) / (uint64_t)J->nt;
  for (uint64_t b = lo; b < hi; ++b)
    J->out[b] = hash_block(J, b);
}

uint64_t gs_select_matrix_hash(const gs_csr_t *A)
{
  if (!A) return 0;
  hash_job_t J;
  J.A = A;
  gs_hash_layout(A->m, A->nnz, J.first);
  const uint64_t nb = J.first[3];
  J.out = malloc(nb * sizeof *J.out);
  if (!J.out) { /* out of host memory: the same blocks, one at a time */
    uint64_t h = hash_seed(A->m, A->n, (int64_t)A->nnz);
    for (uint64_t b = 0; b < nb; ++b) h = gs_hash_mix(h, hash_block(&J, b));
    return finish(h);
  }
  int nt = nb >= 16 ? gs_mm_threads() : 1;
  if (nt < 1) nt = 1;
  if ((uint64_t)nt > nb) nt = nb > 0 ? (int)nb : 1;
  J.nt = nt;
  gs_parallel(nt, hash_share, &J);
  const uint64_t h = hash_fold(A->m, A->n, (int64_t)A->nnz, J.out, nb);
  free(J.out);
  return h;
}

gs_status_t gs_select_matrix_hash_dev(gs_context_t *ctx, const gs_dcsr_t *D, uint64_t *out)
{
  if (!ctx || !D || !out)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_select_matrix_hash_dev: NULL argument");
  uint64_t first[4];
  gs_hash_layout(D->m, D->nnz, first);
  uint64_t *blocks = malloc((first[3] ? first[3] : 1) * sizeof *blocks);
  if (!blocks) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory (matrix hash)");
  const gs_status_t st = gs_select_hash_dev_blocks(ctx, D, blocks);
  if (st == GS_SUCCESS) *out = hash_fold(D->m, D->n, (int64_t)D->nnz, blocks, first[3]);
  free(blocks);
  return st;
}

/* The file of one key: the matrix, the GPU, the version and the options. */
static void cache_file(const char *dir, const gs_select_key_t *k, char *path, size_t len)
{
  uint64_t h = gs_hash_mix(k->matrix_hash, 2);
  h = hash_bytes(h, k->gpu, strlen(k->gpu));
  h = hash_bytes(h, gs_version(), strlen(gs_version()));
  h = hash_bytes(h, k->options, strlen(k->options));
  snprintf(path, len, "%s/%016llx.sel", dir, (unsigned long long)finish(h));
}

#define CACHE_MAGIC "gpusolve-select 2"
#define CACHE_MAX 64 /* entries a file holds: every format of the registry, with room */

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

/* Reads the key's file into t[0..*n): 1 when it is the key's (a stale file of another key by
 * collision, GPU or version is a plain miss, 0), -1 when it does not parse (warned), 0 when
 * there is none. */
static int cache_read(const char *path, const gs_select_key_t *k, gs_select_time_t *t, int *n,
                      gs_selection_t *sel)
{
  char line[1024];
  const char *v;
  int lineno = 0;
  *n = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno != ENOENT)
      warn(sel, "cannot read the selection cache file %s: %s", path, strerror(errno));
    return 0;
  }
  char want_matrix[32];
  snprintf(want_matrix, sizeof want_matrix, "%016llx", (unsigned long long)k->matrix_hash);
  int same = 1;
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
  if (!NEXT() || !keyed(line, "formats", &v)) goto corrupt;
  char *end = NULL;
  long cnt = strtol(v, &end, 10);
  if (end == v || *end || cnt < 0 || cnt > CACHE_MAX) goto corrupt;
  for (int c = 0; c < (int)cnt; ++c) {
    char name[GS_SELECT_NAME + 1];
    int status = 0, used = 0;
    double prep = 0, tn = 0, tt = 0;
    if (!NEXT()) goto corrupt;
    if (sscanf(line, "%32s %d %lg %lg %lg%n", name, &status, &prep, &tn, &tt, &used) != 5 ||
        line[used] != '\0' || strlen(name) >= GS_SELECT_NAME || !isfinite(prep) ||
        !isfinite(tn) || !isfinite(tt) || prep < 0 || tn < 0 || tt < 0 || status > 0 ||
        (status == 0 && !(tn > 0)))
      goto corrupt;
    memset(&t[c], 0, sizeof t[c]);
    snprintf(t[c].name, sizeof t[c].name, "%s", name);
    t[c].status = (gs_status_t)status;
    t[c].prepare_s = prep;
    t[c].spmv_s = tn;
    t[c].spmv_t_s = tt;
    t[c].cost_s = INFINITY;
  }
  if (!NEXT() || strcmp(line, "end") != 0) goto corrupt;
#undef NEXT
  fclose(f);
  if (!same) return 0;
  *n = (int)cnt;
  return 1;
corrupt:
  fclose(f);
  warn(sel, "ignoring the corrupt selection cache file %s (line %d)", path, lineno);
  return -1;
}

int gs_select_cache_load(const char *dir, const gs_select_key_t *k, int need_t,
                         gs_selection_t *sel)
{
  char path[1024];
  gs_select_time_t t[CACHE_MAX];
  int n = 0, filled = 0;
  if (!dir || !k || !sel) return 0;
  cache_file(dir, k, path, sizeof path);
  if (cache_read(path, k, t, &n, sel) != 1) return 0;
  snprintf(sel->cache_file, sizeof sel->cache_file, "%s", path);
  for (int c = 0; c < sel->ntimes; ++c) {
    gs_select_time_t *x = &sel->times[c];
    if (x->status != GS_SELECT_DEFERRED) continue;
    for (int i = 0; i < n; ++i)
      if (!strcmp(t[i].name, x->name) &&
          (t[i].status != GS_SUCCESS || !need_t || t[i].spmv_t_s > 0.0)) {
        x->status = t[i].status;
        x->prepare_s = t[i].prepare_s;
        x->spmv_s = t[i].spmv_s;
        x->spmv_t_s = t[i].spmv_t_s;
        x->cost_s = INFINITY;
        filled++;
      }
  }
  return filled;
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

void gs_select_cache_store(const char *dir, const gs_select_key_t *k, gs_selection_t *sel)
{
  char path[1024], tmp[1100];
  gs_select_time_t t[CACHE_MAX];
  int n = 0;
  if (!dir || !k || !sel) return;
  int e = make_dirs(dir);
  if (e) {
    warn(sel, "cannot create the selection cache folder %s: %s", dir, strerror(e));
    return;
  }
  cache_file(dir, k, path, sizeof path);
  if (cache_read(path, k, t, &n, sel) != 1) n = 0; /* merge into what the file knows */
  for (int c = 0; c < sel->ntimes; ++c) {
    const gs_select_time_t *x = &sel->times[c];
    if (x->status == GS_SELECT_DEFERRED || x->status == GS_SELECT_SKIPPED || x->status > 0 ||
        (x->status == GS_SUCCESS && !(x->spmv_s > 0.0)))
      continue;
    int i = 0;
    while (i < n && strcmp(t[i].name, x->name)) ++i;
    if (i == n) {
      if (n == CACHE_MAX) continue;
      memset(&t[n++], 0, sizeof *t);
    }
    const double known_t = t[i].spmv_t_s; /* an op T time another run measured stays */
    t[i] = *x;
    if (x->status == GS_SUCCESS && !(x->spmv_t_s > 0.0)) t[i].spmv_t_s = known_t;
  }
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
  fprintf(f, "%s\nversion %s\ngpu %s\nmatrix %016llx\noptions %s\nformats %d\n", CACHE_MAGIC,
          gs_version(), k->gpu, (unsigned long long)k->matrix_hash, k->options, n);
  for (int c = 0; c < n; ++c) {
    const int ok = t[c].status == GS_SUCCESS;
    fprintf(f, "%s %d %.17g %.17g %.17g\n", t[c].name, (int)t[c].status, ok ? t[c].prepare_s : 0.0,
            ok ? t[c].spmv_s : 0.0, ok ? t[c].spmv_t_s : 0.0);
  }
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

/* ---- the prepare model ------------------------------------------------------------------------ */

#define MODEL_MAGIC "gpusolve-prepare-model 1"

/* Reads dir's model for gpu into names/rates (at most CACHE_MAX); the count, 0 for none. */
static int model_read(const char *dir, const char *gpu, char names[][GS_SELECT_NAME],
                      double *rates)
{
  char path[1100], line[1024];
  const char *v;
  int n = 0;
  snprintf(path, sizeof path, "%s/prepare.model", dir);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  if (!read_line(f, line, sizeof line) || strcmp(line, MODEL_MAGIC) ||
      !read_line(f, line, sizeof line) || !keyed(line, "version", &v) || strcmp(v, gs_version()) ||
      !read_line(f, line, sizeof line) || !keyed(line, "gpu", &v) || strcmp(v, gpu)) {
    fclose(f);
    return 0; /* another GPU or version: its model does not hold here */
  }
  while (n < CACHE_MAX && read_line(f, line, sizeof line) && strcmp(line, "end")) {
    char name[GS_SELECT_NAME + 1];
    double r = 0.0;
    int used = 0;
    if (sscanf(line, "%32s %lg%n", name, &r, &used) != 2 || line[used] || !isfinite(r) ||
        !(r > 0.0) || strlen(name) >= GS_SELECT_NAME)
      break; /* a damaged tail: what was read stays a hint */
    snprintf(names[n], GS_SELECT_NAME, "%s", name);
    rates[n++] = r;
  }
  fclose(f);
  return n;
}

double gs_select_model_load(const char *dir, const char *gpu, const char *name)
{
  char names[CACHE_MAX][GS_SELECT_NAME];
  double rates[CACHE_MAX];
  if (!dir || !gpu || !name) return 0.0;
  const int n = model_read(dir, gpu, names, rates);
  for (int i = 0; i < n; ++i)
    if (!strcmp(names[i], name)) return rates[i];
  return 0.0;
}

void gs_select_model_store(const char *dir, const char *gpu, const char *name, double prepare_s,
                           double nnz)
{
  char names[CACHE_MAX][GS_SELECT_NAME], path[1100], tmp[1100];
  double rates[CACHE_MAX];
  if (!dir || !gpu || !name || nnz < GS_SELECT_MODEL_MIN_NNZ || !(prepare_s > 0.0) ||
      strchr(gpu, '\n') || make_dirs(dir))
    return;
  const double r = prepare_s / nnz;
  int n = model_read(dir, gpu, names, rates), i = 0;
  while (i < n && strcmp(names[i], name)) ++i;
  if (i == n) {
    if (n == CACHE_MAX) return;
    snprintf(names[n], GS_SELECT_NAME, "%s", name);
    rates[n++] = r;
  } else if (r > rates[i] || rates[i] > 4.0 * r) {
    rates[i] = r;
  } else {
    return; /* nothing new */
  }
  snprintf(path, sizeof path, "%s/prepare.model", dir);
  snprintf(tmp, sizeof tmp, "%s/.model.XXXXXX", dir);
  int fd = mkstemp(tmp);
  if (fd < 0) return;
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(tmp);
    return;
  }
  fprintf(f, "%s\nversion %s\ngpu %s\n", MODEL_MAGIC, gs_version(), gpu);
  for (int k = 0; k < n; ++k) fprintf(f, "%s %.6g\n", names[k], rates[k]);
  fprintf(f, "end\n");
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) unlink(tmp);
}

/* ---- the selection ----------------------------------------------------------------------------- */

/* The record and what the stages need, freed by S with free(&state->sel). */
typedef struct auto_state {
  gs_selection_t sel; /* first member */
  int cache;          /* the cache is keyed and usable */
  int use_cache;      /* as asked */
  int need_transpose;
  int ruled;          /* the features, the rule and the pool have run */
  int keyed;          /* the staged selection has keyed and read the cache (when used) */
  int confident;      /* times' index of the confident start (staged_confident), else -1 */
  double expected_n, expected_t;
  double bw;          /* the best bandwidth measured so far: bytes_per_apply / t (bytes/s) */
  double tried_s;     /* seconds spent preparing and timing candidates (a solve's tries, the
                         measured stage's measuring) */
  double *d_x, *d_y;  /* the timing vectors of the measured stage (timing_vectors), or NULL */
  int model_n;        /* the prepare model read once when the cache was keyed (-1: not yet) */
  char model_names[CACHE_MAX][GS_SELECT_NAME];
  double model_rates[CACHE_MAX];
  char dir[1024];     /* the cache folder asked for ("" for the default) */
  gs_select_key_t key;
  char options[1024];
} auto_state_t;

/* Prepares candidate t (timed); on failure records it in t and returns the status. */
static gs_status_t prepare(gs_context_t *ctx, gs_matrix_t *A, const char *options,
                           gs_select_time_t *t, gs_spmv_t **S)
{
  gs_status_t st = gs_spmv_create_timed(S, ctx, A, t->name, options, &t->prepare_s);
  t->status = st;
  return st;
}

/* a->bw from every known time (measured or cached): without it a cache hit's revisions would
 * bound nothing and build the candidates its byte model rules out. Needs the features. */
static void seed_bandwidth(auto_state_t *a)
{
  for (int c = 0; c < a->sel.ntimes; ++c) {
    const gs_select_time_t *t = &a->sel.times[c];
    const double bytes = gs_select_bytes_bound(t->name, &a->sel.features);
    if (t->status == GS_SUCCESS && bytes > 0.0 && t->spmv_s > 0.0 && bytes / t->spmv_s > a->bw)
      a->bw = bytes / t->spmv_s;
  }
}

/* The timing vectors: y, and x filled on the device with the byte 0x3F (each entry
 * 0x3F3F3F3F3F3F3F3F, about 4.8e-4: normal, finite, nonzero). A zero x would let a transpose
 * kernel that skips zero entries of x (their scatter adds nothing) look ten times faster than
 * it runs (H100: csr-vector's A^T x 22 us against 238); filling on the device spares the host
 * fill and the upload of len entries (12.7 MB on G3_circuit) in every measured stage. */
static gs_status_t timing_vectors(gs_context_t *ctx, size_t len, double **d_x, double **d_y)
{
  gs_status_t st = GS_SUCCESS;
  *d_x = *d_y = NULL;
  GS_TRY(gs_dmalloc(ctx, (void **)d_x, len * sizeof **d_x, "auto: x"));
  GS_TRY(gs_dmalloc(ctx, (void **)d_y, len * sizeof **d_y, "auto: y"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(*d_x, 0x3F, len * sizeof **d_x, ctx->stream)));
cleanup:
  if (st != GS_SUCCESS) {
    gs_dfree(ctx, *d_x);
    gs_dfree(ctx, *d_y);
    *d_x = *d_y = NULL;
  }
  return st;
}

/* Times S's op N (and op T when want_t) into t (spmv_s, spmv_t_s, status), and raises the best
 * bandwidth seen. Each op: warmup products (op N: ramp more, for a GPU that may idle at a low
 * clock; op T runs right after it), then the median of runs timed products, or of at least
 * half as many once they took GS_SELECT_MEASURE_MIN_S. */
static gs_status_t time_ops(auto_state_t *a, gs_spmv_t *S, gs_select_time_t *t, int warmup,
                            int ramp, int runs, double max_s, int want_t)
{
  gs_status_t st = GS_SUCCESS;
  gs_context_t *ctx = gs_spmv_context(S);
  const gs_csr_t *H = gs_matrix_host(gs_spmv_matrix(S));
  const size_t len = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  double *d_x = a->d_x, *d_y = a->d_y;
  const int own = !d_x; /* the measured stage lends its vectors to every candidate */
  if (own) GS_TRY(timing_vectors(ctx, len, &d_x, &d_y));
  gs_spmv_time_opts_t to;
  gs_spmv_time_opts_default(&to);
  to.warmup = warmup + ramp;
  to.max_runs = runs;
  to.min_runs = (runs + 1) / 2;
  to.min_seconds = GS_SELECT_MEASURE_MIN_S;
  to.max_seconds = max_s; /* one very slow candidate stops after 10 products */
  gs_spmv_timing_t tm;
  GS_TRY(gs_spmv_time(S, GS_OP_N, d_x, d_y, &to, &tm));
  to.warmup = warmup;
  t->spmv_s = tm.median_s;
  t->spmv_t_s = 0.0;
  if (want_t) {
    if (!gs_spmv_supports(S, GS_OP_T))
      GS_FAIL(GS_ERR_UNSUPPORTED, "%s has no transpose product for this matrix", t->name);
    GS_TRY(gs_spmv_time(S, GS_OP_T, d_x, d_y, &to, &tm));
    t->spmv_t_s = tm.median_s;
  }
  t->status = GS_SUCCESS;
  seed_bandwidth(a); /* the bandwidth of the byte bound, this time among the others */
cleanup:
  if (own) {
    gs_dfree(ctx, d_x);
    gs_dfree(ctx, d_y);
  }
  if (st != GS_SUCCESS) t->status = st;
  return st;
}

/* The fastest one product of candidate `name` could run: its byte bound at GS_SELECT_BW_SLACK
 * times the best bandwidth known; 0 while nothing is known or the model does not know it. */
static double time_bound(const auto_state_t *a, const char *name)
{
  const double bytes = gs_select_bytes_bound(name, &a->sel.features);
  return a->bw > 0.0 && bytes > 0.0 ? bytes / (GS_SELECT_BW_SLACK * a->bw) : 0.0;
}

/* Predicted prepare seconds of candidate t: its own measured prepare when known, else the
 * model's for its kind. */
static double prepare_predicted(const auto_state_t *a, const gs_select_time_t *t, double nnz)
{
  if (t->status == GS_SUCCESS && t->prepare_s > 0.0) return t->prepare_s;
  const int b = gs_spmv_backend_find(t->name);
  double learned = 0.0;
  for (int k = 0; k < a->model_n; ++k)
    if (!strcmp(a->model_names[k], t->name)) learned = a->model_rates[k];
  return gs_select_prepare_estimate(b >= 0 ? gs_spmv_backend_flags(b) : 0u, nnz, learned);
}

/* Prepares candidate t (timed) and teaches the prepare model what it cost. */
static gs_status_t prepare_learn(gs_context_t *ctx, gs_matrix_t *A, auto_state_t *a,
                                 gs_select_time_t *t, gs_spmv_t **S)
{
  gs_status_t st = prepare(ctx, A, a->options, t, S);
  if (st == GS_SUCCESS && a->cache)
    gs_select_model_store(a->dir, a->key.gpu, t->name, t->prepare_s,
                          (double)gs_matrix_host(A)->nnz);
  return st;
}

/* The record's times for sel->pool, every entry deferred. */
static void times_from_pool(gs_selection_t *sel)
{
  sel->ntimes = sel->pool.n;
  for (int c = 0; c < sel->pool.n; ++c) {
    memset(&sel->times[c], 0, sizeof sel->times[c]);
    snprintf(sel->times[c].name, sizeof sel->times[c].name, "%s", sel->pool.names[c]);
    sel->times[c].status = GS_SELECT_DEFERRED;
    sel->times[c].cost_s = INFINITY;
  }
}

/* Keys the cache (a->key, a->dir) for A; a->cache = 1 when usable. */
static void cache_key(auto_state_t *a, gs_context_t *ctx, gs_matrix_t *A)
{
  gs_selection_t *sel = &a->sel;
  a->cache = 0;
  if (!a->use_cache) return;
  if (!a->dir[0] && gs_select_cache_dir(a->dir, sizeof a->dir) != GS_SUCCESS) {
    warn(sel, "%s%s", gs_last_error(), " (the selection is not cached)");
    return;
  }
  if (strlen(a->options) >= sizeof a->key.options) return; /* cannot key it */
  memset(&a->key, 0, sizeof a->key);
  /* on the GPU from the shared CSR (a pass over memory), else the host's equal value */
  gs_dcsr_t D;
  if (gs_matrix_device_csr(A, &D) != GS_SUCCESS ||
      gs_select_matrix_hash_dev(ctx, &D, &a->key.matrix_hash) != GS_SUCCESS) {
    gs_clear_error();
    a->key.matrix_hash = gs_select_matrix_hash(gs_matrix_host(A));
  }
  snprintf(a->key.gpu, sizeof a->key.gpu, "%s", gs_context_device_name(ctx));
  snprintf(a->key.options, sizeof a->key.options, "%s", a->options);
  a->cache = 1;
  a->model_n = model_read(a->dir, a->key.gpu, a->model_names, a->model_rates);
}

static void cache_fill(auto_state_t *a)
{
  gs_selection_t *sel = &a->sel;
  if (!a->cache) {
    sel->cache = GS_SELECT_CACHE_OFF;
    return;
  }
  const int got = gs_select_cache_load(a->dir, &a->key, a->need_transpose, sel);
  /* a second fill (the staged pool after the light list) keeps the first one's hit */
  sel->cache = got > 0 || sel->cache == GS_SELECT_CACHE_HIT ? GS_SELECT_CACHE_HIT
                                                             : GS_SELECT_CACHE_MISS;
}

static void cache_store(auto_state_t *a)
{
  if (a->cache) gs_select_cache_store(a->dir, &a->key, &a->sel);
}

/* The measured stage over the pool: known (cached) times are used as they are; the others are
 * prepared and timed, the baseline first, then the most promising (least predicted prepare plus
 * products at the byte bound) first, unless they cannot beat the best cost so far or the
 * measuring budget is spent.
 * Leaves the best prepared product in *best (NULL when the best is a cached one not prepared
 * here, or none ran). */
static gs_status_t measure(gs_context_t *ctx, gs_matrix_t *A, auto_state_t *a,
                           const gs_select_opts_t *o, gs_spmv_t **best, char *last_error,
                           size_t lelen)
{
  gs_selection_t *sel = &a->sel;
  const double nnz = (double)gs_matrix_host(A)->nnz;
  const int want_t = a->expected_t > 0.0;
  const double measuring = GS_SELECT_MEASURE_PRODUCTS * (want_t ? 2.0 : 1.0);
  int bi = -1;
  double best_cost = INFINITY;
  *best = NULL;
  /* The shared device CSR is uploaded once for every backend that reads it (and stays with the
   * matrix): the first such candidate would otherwise pay it alone and lose to a format with
   * its own layout. Uploaded and timed here, recorded apart, charged to no candidate. A failure
   * here is left to the candidates' prepares to report. */
  int shared = 0;
  for (int c = 0; c < sel->ntimes; ++c) {
    const int b = gs_spmv_backend_find(sel->times[c].name);
    if (b >= 0 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_SHARED_CSR)) shared = 1;
  }
  if (shared) {
    gs_dcsr_t dcsr;
    const double t0 = gs_wall_seconds();
    if (gs_matrix_device_csr(A, &dcsr) == GS_SUCCESS && gs_context_sync(ctx) == GS_SUCCESS)
      sel->shared_csr_s += gs_wall_seconds() - t0; /* after the features' upload, if any */
  }
  /* the incumbent of the known times; their bandwidth seeds the bounds */
  for (int c = 0; c < sel->ntimes; ++c) {
    const gs_select_time_t *t = &sel->times[c];
    if (t->status != GS_SUCCESS) continue;
    const double cost = t->prepare_s + a->expected_n * t->spmv_s + a->expected_t * t->spmv_t_s;
    if (cost < best_cost) best_cost = cost;
  }
  seed_bandwidth(a);
  /* the vectors every candidate is timed with, once */
  const gs_csr_t *H = gs_matrix_host(A);
  const size_t len = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  if (timing_vectors(ctx, len, &a->d_x, &a->d_y) != GS_SUCCESS)
    a->d_x = a->d_y = NULL; /* each candidate allocates its own then */
  gs_clear_error();
  double t_inc = 0.0; /* the incumbent's op N time: what a wasted measurement runs at */
  for (int c = 0; c < sel->ntimes; ++c)
    if (sel->times[c].status == GS_SUCCESS &&
        (t_inc == 0.0 || sel->times[c].spmv_s < t_inc))
      t_inc = sel->times[c].spmv_s;
  for (;;) {
    /* the next candidate (gs_select_next_candidate): the most promising, least predicted cost
     * at its bound, the pool's order between near equals; while nothing is known, no
     * prediction: the pool's first (the baseline) */
    int elig[GS_SELECT_MAX];
    double pred[GS_SELECT_MAX];
    for (int k = 0; k < sel->ntimes; ++k) {
      elig[k] = sel->times[k].status == GS_SELECT_DEFERRED;
      pred[k] = elig[k] && isfinite(best_cost)
                    ? prepare_predicted(a, &sel->times[k], nnz) +
                          (a->expected_n + a->expected_t) * time_bound(a, sel->times[k].name)
                    : INFINITY;
    }
    const int c = gs_select_next_candidate(pred, elig, sel->ntimes);
    if (c < 0) break;
    gs_select_time_t *t = &sel->times[c];
    gs_spmv_t *S = NULL;
    const double bound = time_bound(a, t->name), prep = prepare_predicted(a, t, nnz);
    /* once something runs: only what could beat it, and within the measuring budget (a
     * share of the incumbent's cost: the measuring is paid whoever wins) */
    if (!gs_select_worth_measuring(prep, bound, a->expected_n + a->expected_t + measuring,
                                   best_cost) ||
        (isfinite(best_cost) &&
         a->tried_s + prep + measuring * t_inc > GS_SELECT_MEASURE_SHARE * best_cost)) {
      t->status = GS_SELECT_SKIPPED;
      t->bound_s = bound;
      continue;
    }
    const double before = gs_wall_seconds();
    const int first = !isfinite(best_cost);
    /* the first timing of a selection runs on a GPU that may be idling at a low clock: more
     * warm-up there (normal rows on the H100: cusparse-csr timed 257 us for its 192, and a
     * slower format won) */
    const int ok = prepare_learn(ctx, A, a, t, &S) == GS_SUCCESS &&
                   time_ops(a, S, t, o->warmup, first ? GS_SELECT_FIRST_WARMUP : 0, o->runs,
                            0.5, want_t) == GS_SUCCESS;
    const double spent = gs_wall_seconds() - before;
    sel->measuring_s += spent;
    if (!first) a->tried_s += spent; /* the budget is for trying others than the baseline */
    if (ok && (t_inc == 0.0 || t->spmv_s < t_inc)) t_inc = t->spmv_s;
    if (ok) {
      const double cost = t->prepare_s + a->expected_n * t->spmv_s + a->expected_t * t->spmv_t_s;
      if (cost < best_cost) { /* ties: the earlier stays */
        gs_spmv_destroy(best);
        *best = S;
        S = NULL;
        bi = c;
        best_cost = cost;
      }
    }
    if (t->status != GS_SUCCESS)
      snprintf(last_error, lelen, "%s: %s", t->name, gs_last_error());
    gs_spmv_destroy(&S);
  }
  gs_dfree(ctx, a->d_x);
  gs_dfree(ctx, a->d_y);
  a->d_x = a->d_y = NULL;
  sel->chosen = gs_select_decide(sel->times, sel->ntimes, a->expected_n, a->expected_t);
  if (*best && sel->chosen != bi) gs_spmv_destroy(best); /* a cached one won */
  return GS_SUCCESS;
}

/* ---- the staged selection of a solve ------------------------------------------------------------
 *
 * A solve does not know its number of products before its first iterations. So it starts at
 * once with a light format (on the shared device CSR, no build), and at each host check the
 * solver passes the products run so far and its forecast of the products left;
 * gs_spmv_auto_revise then times the current format (once), runs the features, the rule and the
 * cache lookup once their cost is paid by the time spent (the staged start, whose upload of the
 * shared CSR dominates on a large matrix, plus the products), switches to a candidate of known
 * times that saves more than its prepare, or prepares and times ONE candidate of the pool once
 * the time spent reaches its predicted prepare plus what the earlier tries cost (a spent-time
 * trigger: a wasted try costs at most the time already spent), while the forecast says it could
 * still pay back. The cache remembers every time measured. */

static int light(const char *name)
{
  const int b = gs_spmv_backend_find(name);
  return b >= 0 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_LIGHT);
}

/* What the staged start charges a format of known times: its prepare and
 * GS_SELECT_START_PRODUCTS products (the expected products when fewer). */
static double start_cost(const auto_state_t *a, const gs_select_time_t *t)
{
  return t->prepare_s + fmin(GS_SELECT_START_PRODUCTS, a->expected_n) * t->spmv_s;
}

/* At the staged start, with a cache file: the cached format of least cost (prepare plus
 * GS_SELECT_START_PRODUCTS products) outside the light list joins the list, with its times,
 * when it costs less than every light one the cache knows, so that the start may take it.
 * 1 when one joined: a hit even where the file knows no light format (an earlier run that
 * started on the confident format and never timed a light one). */
static int staged_hit_best(auto_state_t *a)
{
  gs_selection_t *sel = &a->sel;
  gs_selection_t *x = calloc(1, sizeof *x);
  if (!x || sel->ntimes >= GS_SELECT_MAX || sel->pool.n >= GS_SELECT_MAX) {
    free(x);
    return 0;
  }
  for (int b = 0; b < gs_spmv_backend_count() && x->ntimes < GS_SELECT_MAX; ++b) {
    const char *name = gs_spmv_backend_name(b);
    int listed = !strcmp(name, "auto");
    for (int c = 0; c < sel->ntimes && !listed; ++c) listed = !strcmp(sel->times[c].name, name);
    if (listed) continue;
    gs_select_time_t *t = &x->times[x->ntimes++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->status = GS_SELECT_DEFERRED;
  }
  double best = INFINITY;
  for (int c = 0; c < sel->ntimes; ++c)
    if (sel->times[c].status == GS_SUCCESS) best = fmin(best, start_cost(a, &sel->times[c]));
  int pick = -1;
  if (gs_select_cache_load(a->dir, &a->key, a->need_transpose, x) > 0)
    for (int c = 0; c < x->ntimes; ++c) {
      const gs_select_time_t *t = &x->times[c];
      if (t->status == GS_SUCCESS && t->spmv_s > 0.0 && start_cost(a, t) < best) {
        best = start_cost(a, t);
        pick = c;
      }
    }
  if (pick >= 0) {
    sel->times[sel->ntimes++] = x->times[pick];
    snprintf(sel->pool.names[sel->pool.n++], GS_SELECT_NAME, "%s", x->times[pick].name);
  }
  free(x);
  return pick >= 0;
}

/* Without known times (a cache miss or no cache), on a matrix whose features were made at its
 * creation: the pool's format built on the GPU whose modelled bytes are a small share of the
 * light start's (gs_select_confident_start: bccoo's value table on a stencil) joins the list,
 * so that the start prepares it first instead of reaching it after the light format's timing
 * and the tries; a revision times it as any running format, and the light ones remain. */
static void staged_confident(auto_state_t *a, gs_matrix_t *A)
{
  gs_selection_t *sel = &a->sel;
  gs_select_features_t f;
  gs_select_rule_t r, pool;
  if (!gs_matrix_select_features_known(A) || sel->ntimes < 1 || sel->ntimes >= GS_SELECT_MAX ||
      sel->pool.n >= GS_SELECT_MAX)
    return;
  if (gs_matrix_select_features(A, &f) != GS_SUCCESS ||
      gs_select_rule(&f, a->options, a->need_transpose, &r) != GS_SUCCESS ||
      gs_select_pool(&f, a->options, a->need_transpose, &r, &pool) != GS_SUCCESS) {
    gs_clear_error(); /* no confident start: the light one */
    return;
  }
  const int k = gs_select_confident_start(&f, &pool, sel->times[0].name);
  if (k < 0) return;
  gs_select_time_t *t = &sel->times[sel->ntimes];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", pool.names[k]);
  t->status = GS_SELECT_DEFERRED;
  t->cost_s = INFINITY;
  snprintf(sel->pool.names[sel->pool.n++], GS_SELECT_NAME, "%s", pool.names[k]);
  a->confident = sel->ntimes++;
}

/* The staged start: the candidate of least known cost (prepare plus GS_SELECT_START_PRODUCTS
 * products: known on a cache hit), else the confident start (staged_confident), else the
 * pool's first light one that prepares.
 * GS_ERR_UNSUPPORTED when the pool has no light candidate. */
static gs_status_t staged_start(gs_context_t *ctx, gs_matrix_t *A, auto_state_t *a, gs_spmv_t **S,
                                char *last_error, size_t lelen)
{
  gs_selection_t *sel = &a->sel;
  int order[GS_SELECT_MAX], n = 0;
  if (a->confident >= 0) order[n++] = a->confident; /* first: nothing is known */
  for (int c = 0; c < sel->ntimes; ++c)
    if (c != a->confident && (light(sel->times[c].name) || sel->times[c].status == GS_SUCCESS))
      order[n++] = c;
  if (n == 0) return GS_ERR_UNSUPPORTED;
  for (int i = 1; i < n; ++i) /* known times first, cheapest first; the pool's order otherwise */
    for (int j = i; j > 0; --j) {
      const gs_select_time_t *p = &sel->times[order[j - 1]], *q = &sel->times[order[j]];
      const int swap = q->status == GS_SUCCESS &&
                       (p->status != GS_SUCCESS || start_cost(a, q) < start_cost(a, p));
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

/* The features, the rule and the pool, once a revision can afford them (one O(nnz) pass on the
 * GPU): the list becomes the pool, keeping the times measured so far. The cache is keyed apart
 * (gs_spmv_auto_revise), once the time spent has paid for its hash as well. */
static void staged_rule(auto_state_t *a, gs_spmv_t *S)
{
  gs_selection_t *sel = &a->sel;
  gs_matrix_t *A = gs_spmv_matrix(S);
  const gs_csr_t *H = gs_matrix_host(A);
  gs_select_rule_t r, pool;
  a->ruled = 1;
  /* the features on the GPU from the shared CSR (the host's values exactly; mostly made with
   * the matrix), else on the host */
  gs_status_t fs = gs_matrix_select_features(A, &sel->features);
  if (fs != GS_SUCCESS) {
    gs_clear_error();
    fs = gs_select_features_with(H, gs_matrix_features(A), &sel->features);
  }
  if (fs != GS_SUCCESS ||
      gs_select_rule(&sel->features, a->options, a->need_transpose, &r) != GS_SUCCESS ||
      gs_select_pool(&sel->features, a->options, a->need_transpose, &r, &pool) != GS_SUCCESS)
    return; /* keep the light list */
  gs_select_time_t t[GS_SELECT_MAX];
  int chosen = -1;
  for (int c = 0; c < pool.n; ++c) {
    memset(&t[c], 0, sizeof t[c]);
    snprintf(t[c].name, sizeof t[c].name, "%s", pool.names[c]);
    t[c].status = GS_SELECT_DEFERRED;
    t[c].cost_s = INFINITY;
    for (int k = 0; k < sel->ntimes; ++k)
      if (!strcmp(sel->times[k].name, pool.names[c])) {
        t[c] = sel->times[k];
        if (k == sel->chosen) chosen = c;
      }
  }
  if (chosen < 0 && pool.n < GS_SELECT_MAX) { /* a cached best the start took, outside the
                                                 rule's pool: it stays in it */
    const gs_select_time_t *run = &sel->times[sel->chosen];
    snprintf(pool.names[pool.n], GS_SELECT_NAME, "%s", run->name);
    t[pool.n] = *run;
    chosen = pool.n++;
  }
  if (chosen < 0) return; /* no room: keep the light list */
  sel->rule = r;
  sel->pool = pool;
  memcpy(sel->times, t, (size_t)pool.n * sizeof *t);
  sel->ntimes = pool.n;
  sel->chosen = chosen;
}

gs_status_t gs_spmv_auto_revise(gs_spmv_t *S, long iterations, double products_done,
                                double remaining, int *switched)
{
  gs_status_t st = GS_SUCCESS;
  if (switched) *switched = 0;
  gs_selection_t *sel = gs_spmv_selection_mut(S);
  if (!sel || !sel->staged || sel->chosen < 0) return GS_SUCCESS;
  auto_state_t *a = (auto_state_t *)sel;
  const double t0 = gs_wall_seconds();
  gs_context_t *ctx = gs_spmv_context(S);
  gs_matrix_t *A = gs_spmv_matrix(S);
  const double nnz = (double)gs_matrix_host(A)->nnz;
  gs_select_time_t *cur = &sel->times[sel->chosen];
  gs_spmv_t *C = NULL;
  sel->remaining_products = remaining;
  /* timing the current format costs about 12 products: only once as many have run */
  if (cur->status != GS_SUCCESS && products_done < GS_SELECT_MEASURE_PRODUCTS) goto done;
  if (cur->status != GS_SUCCESS) { /* the current format's time, once */
    const double before = gs_wall_seconds();
    /* 2 warm-up products, not the measured stage's extra ones for an idle GPU's clock ramp:
     * the solve's own products (at least GS_SELECT_MEASURE_PRODUCTS) ran just before */
    if (time_ops(a, S, cur, 2, 0, 10, 0.1, 0) != GS_SUCCESS) {
      sel->staged = 0; /* cannot compare: keep what runs */
      goto done;
    }
    a->tried_s += gs_wall_seconds() - before;
    cache_store(a);
  }
  /* what this solve has spent so far: the staged start (the shared CSR's upload and the light
   * format's prepare, sel->seconds) and the products; the tries may spend as much again */
  const double t_cur = cur->spmv_s, spent = sel->seconds + products_done * t_cur;
  if (!a->ruled) { /* the rule and the pool, once the time spent has paid for them (nothing
                       when the matrix made the features with itself) */
    const double feat = gs_matrix_select_features_known(A)
                            ? 0.0
                            : GS_SELECT_FEATURE_DEV_S + GS_SELECT_FEATURE_DEV_S_PER_NNZ * nnz;
    if (a->tried_s + feat > spent) goto done;
    const double before = gs_wall_seconds();
    staged_rule(a, S);
    sel->features_s = gs_wall_seconds() - before;
    a->tried_s += sel->features_s;
    if (a->keyed) cache_fill(a); /* the pool's candidates the light list did not have */
    seed_bandwidth(a);           /* the features now give the known times' bytes */
    cur = &sel->times[sel->chosen];
  }
  if (a->use_cache && !a->keyed &&
      a->tried_s + GS_SELECT_HASH_DEV_S + GS_SELECT_HASH_DEV_S_PER_NNZ * nnz <= spent) {
    /* the cache, once paid for: it fills in the candidates not measured yet and takes those
     * measured before it was keyed */
    const double before = gs_wall_seconds();
    a->keyed = 1;
    cache_key(a, ctx, A);
    cache_fill(a);
    cache_store(a);
    seed_bandwidth(a);
    a->tried_s += gs_wall_seconds() - before;
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
  if (best < 0) { /* else the most promising deferred candidate, once the trigger lets it */
    int elig[GS_SELECT_MAX];
    double prep[GS_SELECT_MAX], bound[GS_SELECT_MAX];
    for (int c = 0; c < sel->ntimes; ++c) {
      gs_select_time_t *t = &sel->times[c];
      elig[c] = c != sel->chosen && t->status == GS_SELECT_DEFERRED;
      prep[c] = bound[c] = 0.0;
      if (!elig[c]) continue;
      bound[c] = time_bound(a, t->name);
      if (bound[c] >= t_cur) { /* its bytes alone make it slower: never worth a build */
        t->status = GS_SELECT_SKIPPED;
        t->bound_s = bound[c];
        elig[c] = 0;
        continue;
      }
      prep[c] = prepare_predicted(a, t, nnz);
    }
    best = gs_select_staged_pick(sel->ntimes, elig, prep, bound, spent, a->tried_s, remaining,
                                 t_cur);
    if (best < 0) goto done;
  }
  gs_select_time_t *t = &sel->times[best];
  const int was_known = t->status == GS_SUCCESS;
  const gs_select_time_t known = *t;
  const double before = gs_wall_seconds();
  if (prepare_learn(ctx, A, a, t, &C) != GS_SUCCESS) { /* status records the failure */
    a->tried_s += gs_wall_seconds() - before;
    cache_store(a);
    goto done;
  }
  if (!was_known) {
    sel->tried++;
    if (time_ops(a, C, t, 2, 0, 10, 0.1, 0) != GS_SUCCESS) {
      a->tried_s += gs_wall_seconds() - before;
      goto done;
    }
    a->tried_s += gs_wall_seconds() - before;
    cache_store(a);
  } else {
    const double prep = t->prepare_s;
    *t = known;
    t->prepare_s = prep;
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
  char last_error[512] = "";
  const double t0 = gs_wall_seconds();
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: out is NULL");
  *out = NULL;
  if (!ctx || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: NULL argument");
  GS_CHECK(gs_matrix_host_ready(A)); /* the features and candidates read the host copy */
  if (gs_matrix_context(A) != ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: the matrix was created on "
                    "another context");
  if (opts) o = *opts;
  else gs_select_opts_default(&o);
  if (!(o.expected_products > 0.0) || !isfinite(o.expected_products) ||
      !(o.expected_products_t >= 0.0) || !isfinite(o.expected_products_t) || o.warmup < 0 ||
      o.runs < 1 || o.runs > 100000)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: need expected_products > 0 "
                    "(%g), expected_products_t >= 0 (%g), warmup >= 0 (%d) and 1 <= runs <= "
                    "100000 (%d)", o.expected_products, o.expected_products_t, o.warmup, o.runs);
  /* its timings and the solves it serves apply double vectors */
  GS_CHECK(gs_spmv_options_refuse_float("auto", options));
  if (strlen(options ? options : "") >= sizeof ((auto_state_t *)0)->options)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create_auto: the option string is too long");
  auto_state_t *as = calloc(1, sizeof *as);
  if (!as) return GS_ERROR(GS_ERR_HOST_MEMORY, "auto: out of host memory");
  as->confident = -1;
  sel = &as->sel;
  snprintf(as->options, sizeof as->options, "%s", options ? options : "");
  as->use_cache = o.use_cache && !o.rule_only;
  as->need_transpose = o.need_transpose || o.expected_products_t > 0.0;
  as->expected_n = o.expected_products;
  as->expected_t = o.expected_products_t;
  if (o.cache_dir) snprintf(as->dir, sizeof as->dir, "%s", o.cache_dir);
  const gs_csr_t *H = gs_matrix_host(A);
  sel->expected_products = o.expected_products;
  sel->expected_products_t = o.expected_products_t;
  sel->chosen = -1;
  int started = 0;
  /* staged: no features, rule or cache now (a revision runs them once the products paid) */
  if (o.staged && !o.rule_only) {
    sel->rule.row = "staged: the light formats; the rule and the pool at the solve's revisions";
    GS_TRY(gs_select_light(as->options, as->need_transpose, &sel->pool));
    times_from_pool(sel);
    sel->staged = 1;
    if (as->use_cache) { /* keyed now: the hash is a pass over the shared CSR, which the light
                            formats upload anyway; a hit's times order the start */
      as->keyed = 1;
      cache_key(as, ctx, A);
      cache_fill(as);
      if (as->cache && staged_hit_best(as)) sel->cache = GS_SELECT_CACHE_HIT;
    }
    if (sel->cache != GS_SELECT_CACHE_HIT) staged_confident(as, A);
    if (staged_start(ctx, A, as, &S, last_error, sizeof last_error) == GS_SUCCESS && S)
      started = 1; /* gs_spmv_auto_revise goes on during the solve */
    else { /* no light format prepares: the measured stage below, from a clean record */
      memset(sel, 0, sizeof *sel);
      sel->chosen = -1;
      sel->expected_products = o.expected_products;
      sel->expected_products_t = o.expected_products_t;
    }
  }
  if (!started) {
    /* The features on the GPU from the shared CSR (the host's values exactly: spmv/
     * features_dev.h; mostly made with the matrix), else on the host copy. The CSR's upload,
     * which the candidates need anyway, is timed apart as shared_csr_s, as measure() times
     * it. */
    gs_dcsr_t D;
    const int before = gs_matrix_upload_seconds(A) > 0.0;
    const double tu = gs_wall_seconds();
    gs_status_t fs = gs_matrix_device_csr(A, &D);
    if (fs == GS_SUCCESS) fs = gs_context_sync(ctx);
    if (fs == GS_SUCCESS && !before) sel->shared_csr_s = gs_wall_seconds() - tu;
    const double tf = gs_wall_seconds();
    if (fs == GS_SUCCESS) fs = gs_matrix_select_features(A, &sel->features);
    if (fs != GS_SUCCESS) {
      gs_clear_error();
      GS_TRY(gs_select_features_with(H, gs_matrix_features(A), &sel->features)); /* cached */
    }
    GS_TRY(gs_select_rule(&sel->features, options, as->need_transpose, &sel->rule));
    sel->features_s = gs_wall_seconds() - tf;
    as->ruled = 1;
  }
  if (started) {
  } else if (o.rule_only) { /* the rule's order, first that prepares */
    sel->pool = sel->rule;
    for (int c = 0; c < sel->rule.n && !S; ++c) {
      gs_select_time_t *t = &sel->times[c];
      snprintf(t->name, sizeof t->name, "%s", sel->rule.names[c]);
      t->cost_s = INFINITY;
      if (prepare(ctx, A, options, t, &S) == GS_SUCCESS) sel->chosen = c;
      else snprintf(last_error, sizeof last_error, "%s: %s", t->name, gs_last_error());
      sel->ntimes = c + 1;
    }
  } else {
    GS_TRY(gs_select_pool(&sel->features, options, as->need_transpose, &sel->rule, &sel->pool));
    times_from_pool(sel);
    cache_key(as, ctx, A);
    cache_fill(as);
    sel->measured = 1;
    GS_TRY(measure(ctx, A, as, &o, &S, last_error, sizeof last_error));
    /* a cached best not prepared here: prepare it; one that fails now is marked, the next
     * tried */
    while (!S && sel->chosen >= 0) {
      double prep = 0.0;
      gs_status_t ps = gs_spmv_create_timed(&S, ctx, A, sel->times[sel->chosen].name, options,
                                            &prep);
      if (ps == GS_SUCCESS) break;
      snprintf(last_error, sizeof last_error, "%s: %s", sel->times[sel->chosen].name,
               gs_last_error());
      sel->times[sel->chosen].status = ps;
      sel->chosen = gs_select_decide(sel->times, sel->ntimes, as->expected_n, as->expected_t);
    }
    if (S) cache_store(as);
  }
  if (!S || sel->chosen < 0)
    GS_FAIL(GS_ERR_UNSUPPORTED, "auto: none of the %d candidate formats could be prepared "
            "(last: %s)", sel->pool.n, last_error);
  snprintf(sel->chosen_name, sizeof sel->chosen_name, "%s", sel->pool.names[sel->chosen]);
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
