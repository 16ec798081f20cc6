/* apps/cmd_batch.c: `gpusolve batch`: many small matrices at once (issue 13): the batched SpMV
 * kernels against the vendor's alternatives (the batch as one block-diagonal matrix, a loop of
 * calls, cuSPARSE's strided batches where the batch is uniform) and our own single-matrix ones in
 * the same run, and the batched CG / BiCGSTAB / GMRES with Jacobi, block-Jacobi or ILU(0). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "apps/cli.h"
#include "apps/solve_opts.h"

static const char *usage_text =
    "usage: gpusolve batch (DIR | LIST | --gen laplace|random) [options]\n\n"
    "Many small, independent matrices in one batch (a thread block per problem, or a warp per\n"
    "small problem with batch-csr-warp). Inputs: every .mtx file of DIR (sorted by name), the\n"
    ".mtx files listed in LIST (one path a line, relative to LIST's folder; # starts a comment),\n"
    "or a generated batch whose sizes and patterns vary per problem. With no --solve it\n"
    "benchmarks the batched SpMV kernels.\n\n"
    "  --gen KIND         laplace (2D 5-point, SPD) or random (nonsymmetric, diagonally dominant)\n"
    "  --count N          problems: generated (default 1000), or the inputs repeated in turn\n"
    "  --rows MIN:MAX     generated sizes, drawn uniformly (default 10:2000); N means N:N\n"
    "  --shared           one pattern for all generated problems (the first one drawn; --rows N\n"
    "                     fixes its size), values varied per problem: a uniform batch stored once,\n"
    "                     which cuSPARSE's strided batches can read\n"
    "  --seed S           generator seed (default 1)\n"
    "  --format NAME|all  batched kernel(s) to time (default all): batch-csr-scalar,\n"
    "                     batch-csr-vector, batch-csr-smart, batch-csr-i, batch-coo, batch-ell,\n"
    "                     batch-csr-warp (small problems a warp each, 8 a block),\n"
    "                     batch-csr-stream (chunks of whole rows through shared memory),\n"
    "                     batch-csr-scalar16, batch-csr-stream16 (the same on 16-bit row\n"
    "                     pointers and columns: problems of <= 65,535 entries), auto,\n"
    "                     or a vendor baseline alone: batch-cusparse, batch-cusparse2\n"
    "  --runs N           timed products per kernel, median reported (default 50, after 10 warm-up)\n"
    "  --loop-max N       time a loop of one cusparse-csr call per problem when N <= this\n"
    "                     (default 1000)\n"
    "  --no-baselines     skip the baselines (block-diagonal, loop, strided cuSPARSE)\n"
    "  --solve METHOD     @METHODS@: the batched solver, b = 1 for every problem\n"
    "  --precond NAME     @PRECONDS@ (default none) in the batched solve, set up\n"
    "                     per problem inside the solve's launch\n"
    "  --precond-opt block=K,agglomerate=0|1   block-jacobi: blocks of at most K rows (1..8,\n"
    "                     default 8), from runs of rows with one pattern (1, default) or fixed (0)\n"
    "  --jacobi           the same as --precond jacobi\n"
    "  --restart M        GMRES(M), default 30 (each problem min(M, its rows))\n"
    "  --rtol R --atol A --maxit K   stopping test of gs_solve (defaults 1e-8, 0, 10000),\n"
    "                     with solve's bounds (0..1, 0..1e300, 0..2147483647)\n"
    "  --compare          also solve the whole batch as ONE block-diagonal system with gs_solve\n"
    "  --json             one JSON document on stdout (per-kernel rows; per-problem solve table)\n\n"
    "Baselines: the whole batch as ONE block-diagonal matrix through cusparse-csr, csr-vector and\n"
    "hola; a loop of cusparse-csr calls (small batches); cuSPARSE's strided batches (cusparseSpMM,\n"
    "one column, CSR_ALG1 and CSR_ALG2: batch-cusparse, batch-cusparse2), \"n/a (patterns\n"
    "differ)\" unless every problem has one m, n and nnz.\n"
    "Columns: median us of one batched product, GB/s of the byte floor (CSR arrays + x + y, the\n"
    "same bytes for every kernel), x floor = time / (floor bytes at the device's copy bandwidth),\n"
    "GFLOP/s (2 nnz / time), speed-up over the whole batch as one block-diagonal matrix through\n"
    "cusparse-csr (vs bd-cus) and over the faster strided cuSPARSE row (vs stride, - when n/a).\n"
    "Exit status 1 when a solve leaves a problem unconverged.\n";

typedef struct {
  gs_csr_t **A;
  int count;
} inputs_t;

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *dup(const char *s)
{
  char *d = malloc(strlen(s) + 1);
  return d ? strcpy(d, s) : NULL;
}

static int ends_with(const char *s, const char *t)
{
  size_t a = strlen(s), b = strlen(t);
  return a >= b && !strcmp(s + a - b, t);
}

/* The paths of DIR's .mtx files or of LIST's lines (malloc'd strings). */
static int input_paths(const char *path, char ***out, int *n)
{
  char **p = NULL;
  int cnt = 0, cap = 0;
  DIR *d = opendir(path);
  char line[4096];
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!ends_with(e->d_name, ".mtx") && !ends_with(e->d_name, ".mtx.gz")) continue;
      if (cnt == cap && !(p = realloc(p, (cap = cap ? 2 * cap : 64) * sizeof *p))) break;
      snprintf(line, sizeof line, "%s/%s", path, e->d_name);
      p[cnt++] = dup(line);
    }
    closedir(d);
    if (cnt) qsort(p, (size_t)cnt, sizeof *p, cmp_str);
  } else {
    FILE *f = fopen(path, "r");
    if (!f) return cli_fail(CLI_BAD_INPUT, "batch: cannot open '%s' (a folder or a list file)", path);
    /* a matrix given where the list goes: its lines are no paths */
    char head[16] = "";
    const size_t got = fread(head, 1, sizeof head - 1, f);
    if (got >= 14 && !strncasecmp(head, "%%MatrixMarket", 14)) {
      fclose(f);
      return cli_fail(CLI_BAD_INPUT, "batch: '%s' is a Matrix Market file; batch takes a folder of "
                      ".mtx files or a list file of matrices, one path per line", path);
    }
    if (got >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b) {
      fclose(f);
      return cli_fail(CLI_BAD_INPUT, "batch: '%s' is gzip-compressed (a matrix?); batch takes a "
                      "folder of .mtx files or a list file of matrices, one path per line", path);
    }
    rewind(f);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = '\0';
    else dir[0] = '\0';
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "#\r\n")] = '\0';
      char *s = line + strspn(line, " \t");
      if (!*s) continue;
      char full[8200];
      snprintf(full, sizeof full, "%s%s", s[0] == '/' ? "" : dir, s);
      if (cnt == cap && !(p = realloc(p, (cap = cap ? 2 * cap : 64) * sizeof *p))) break;
      p[cnt++] = dup(full);
    }
    fclose(f);
  }
  if (!cnt) {
    free(p);
    return cli_fail(CLI_BAD_INPUT, "batch: no .mtx files in '%s'", path);
  }
  *out = p;
  *n = cnt;
  return CLI_OK;
}

static void free_inputs(inputs_t *in)
{
  gs_batch_gen_free(&in->A, in->count);
  in->count = 0;
}

/* The files, read once, repeated in turn up to count problems (copies, so each is owned once). */
static int load_inputs(const char *path, long count, inputs_t *in)
{
  char **paths = NULL;
  int n = 0, rc = input_paths(path, &paths, &n);
  if (rc) return rc;
  const int total = count > 0 ? (int)count : n;
  in->A = calloc((size_t)total, sizeof *in->A);
  in->count = total;
  const int nread = n < total ? n : total; /* --count below the files: the first ones */
  if (!in->A) rc = cli_fail_status(GS_ERR_HOST_MEMORY);
  for (int i = 0; i < nread && !rc; ++i) rc = cli_load_matrix(paths[i], &in->A[i]);
  for (int i = nread; i < total && !rc; ++i)
    if (gs_csr_copy(&in->A[i], in->A[i % nread]) != GS_SUCCESS) rc = cli_fail_status(GS_ERR_HOST_MEMORY);
  for (int i = 0; i < n; ++i) free(paths[i]);
  free(paths);
  if (rc) free_inputs(in);
  return rc;
}

/* The batch as one block-diagonal matrix (x and y have the batch's layout). */
static gs_status_t block_diagonal(const inputs_t *in, gs_csr_t **out)
{
  gs_off_t m = 0, n = 0, nnz = 0;
  for (int i = 0; i < in->count; ++i) {
    m += in->A[i]->m;
    n += in->A[i]->n;
    nnz += in->A[i]->nnz;
  }
  if (m > INT32_MAX || n > INT32_MAX)
    return GS_ERR_UNSUPPORTED;
  gs_csr_t *D;
  gs_status_t st = gs_csr_create(&D, (gs_idx_t)m, (gs_idx_t)n, nnz);
  if (st != GS_SUCCESS) return st;
  gs_off_t r = 0, c = 0, e = 0;
  for (int i = 0; i < in->count; ++i) {
    const gs_csr_t *a = in->A[i];
    for (gs_idx_t k = 0; k < a->m; ++k) D->row_ptr[r + k + 1] = e + a->row_ptr[k + 1];
    for (gs_off_t k = 0; k < a->nnz; ++k) {
      D->col[e + k] = (gs_idx_t)(c + a->col[k]);
      D->val[e + k] = a->val[k];
    }
    r += a->m;
    c += a->n;
    e += a->nnz;
  }
  *out = D;
  return GS_SUCCESS;
}

/* The x every product of the benchmark multiplies (host copy for the error checks). */
static void fill_x(double *x, size_t n)
{
  for (size_t k = 0; k < n; ++k) x[k] = 1.0 + (double)(k % 7) / 8.0;
}

typedef struct {
  char name[48];
  double us, gbs, xfloor, gflops, speedup, speedup_strided, err;
  char note[300];
} row_t;

/* A uniform batch from the generator: one pattern, values per problem (gs_batch_gen_shared);
 * in->A gets a full copy of each problem (the block-diagonal baselines and the error checks read
 * them), *pattern and *values the shared input of gs_batch_create_shared. */
static gs_status_t gen_shared(const char *kind, int count, gs_idx_t rmin, gs_idx_t rmax,
                              uint64_t seed, inputs_t *in, gs_csr_t **pattern, double **values)
{
  gs_status_t st = gs_batch_gen_shared(pattern, values, kind, count, rmin, rmax, seed);
  if (st != GS_SUCCESS) return st;
  const gs_csr_t *P = *pattern;
  in->A = calloc((size_t)count, sizeof *in->A);
  in->count = count;
  if (!in->A) st = GS_ERR_HOST_MEMORY;
  for (int i = 0; i < count && st == GS_SUCCESS; ++i) {
    st = gs_csr_copy(&in->A[i], P);
    if (st == GS_SUCCESS && P->nnz)
      memcpy(in->A[i]->val, *values + (size_t)i * (size_t)P->nnz, (size_t)P->nnz * sizeof(double));
  }
  return st;
}

/* The product of one batched kernel or vendor baseline on B: timed (median of runs after 10
 * warm-up), its bytes, its error against every problem's host product. A kernel that refuses
 * the batch (ELL's fill, a vendor baseline's "patterns differ") gives a row with the reason as
 * its note and no time; other failures are returned. */
static gs_status_t time_batched(gs_context_t *ctx, gs_batch_t *B, const inputs_t *in,
                                const char *name, int runs, double bw, const double *dx,
                                double *dy, double *h, row_t *R)
{
  const gs_off_t *ro = gs_batch_row_offsets(B), *co = gs_batch_col_offsets(B);
  const size_t nx = (size_t)co[in->count], ny = (size_t)ro[in->count];
  gs_batch_spmv_t *S = NULL;
  gs_batch_mem_t mem;
  double med = NAN;
  R->us = R->gbs = R->xfloor = R->gflops = R->speedup = R->speedup_strided = R->err = NAN;
  gs_status_t st = gs_batch_spmv_create(&S, B, name, 0.0);
  if (st == GS_ERR_FORMAT_FILL || st == GS_ERR_UNSUPPORTED) {
    snprintf(R->note, sizeof R->note, "%s", st == GS_ERR_FORMAT_FILL ? "refused: " : "");
    strncat(R->note, st == GS_ERR_UNSUPPORTED && strstr(gs_last_error(), "patterns differ")
                         ? "n/a (patterns differ)" : gs_last_error(),
            sizeof R->note - strlen(R->note) - 1);
    return GS_SUCCESS;
  }
  if (st != GS_SUCCESS) return st;
  if ((st = gs_batch_spmv_time(S, dx, dy, 10, runs, &med, NULL)) != GS_SUCCESS ||
      (st = gs_batch_spmv_memory(S, &mem)) != GS_SUCCESS) {
    gs_batch_spmv_destroy(&S);
    return st;
  }
  snprintf(R->note, sizeof R->note, "%s", gs_batch_spmv_describe(S));
  R->us = med * 1e6;
  R->gbs = mem.floor_bytes / med * 1e-9;
  R->xfloor = bw > 0 ? med / (mem.floor_bytes / bw) : NAN;
  R->gflops = 2.0 * (double)gs_batch_nnz(B) / med * 1e-9;
  /* error against each problem's host product, norm-wise (gs_spmv_rel_error) */
  st = gs_copy_to_host(ctx, h, dy, ny * 8);
  double *xh = malloc((nx + 1) * 8);
  if (st == GS_SUCCESS && xh) {
    fill_x(xh, nx);
    R->err = 0.0;
    for (int i = 0; i < in->count; ++i)
      R->err = fmax(R->err, gs_spmv_rel_error(in->A[i], GS_OP_N, 1.0, xh + co[i], 0.0, NULL, h + ro[i]));
  }
  free(xh);
  gs_batch_spmv_destroy(&S);
  return st;
}

/* A table cell: " " then v in fmt, or "-" right-aligned in width when v is not finite (a
 * baseline that did not run, a column that does not apply to the row). */
static void print_num(double v, int width, const char *fmt)
{
  putchar(' ');
  if (isfinite(v)) printf(fmt, v);
  else printf("%*s", width, "-");
}

static double device_seconds(gs_spmv_t *S, const double *dx, double *dy)
{
  gs_spmv_time_opts_t o;
  gs_spmv_timing_t t;
  gs_spmv_time_opts_default(&o);
  return gs_spmv_time(S, GS_OP_N, dx, dy, &o, &t) == GS_SUCCESS ? t.median_s : NAN;
}

/* --precond-opt of the batched block-Jacobi (checked by the registry first: keys, 1 <= block
 * <= 32): block, agglomerate; singular=jacobi and blocks above GS_BATCH_BJ_MAX_BLOCK are not
 * batched. Keys may be qualified ("block-jacobi.block=4"). */
static int batch_precond_opts(const char *pc, const char *opts, int *block, int *agglomerate)
{
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", opts);
  for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) continue; /* the registry's check refused it already */
    *eq = '\0';
    const char *key = strncmp(kv, "block-jacobi.", 13) ? kv : kv + 13, *v = eq + 1;
    if (strcmp(pc, "block-jacobi")) continue;
    if (!strcmp(key, "block")) {
      *block = atoi(v);
      if (*block > GS_BATCH_BJ_MAX_BLOCK)
        return cli_fail(CLI_BAD_INPUT, "batch: --precond-opt block=%s: the batched block-Jacobi "
                        "takes blocks of at most %d rows", v, GS_BATCH_BJ_MAX_BLOCK);
    } else if (!strcmp(key, "agglomerate")) {
      *agglomerate = atoi(v);
    } else if (!strcmp(key, "singular") && strcmp(v, "error") != 0) {
      return cli_fail(CLI_BAD_INPUT, "batch: --precond-opt singular=%s: the batched block-Jacobi "
                      "stops a problem whose block is singular (breakdown, named) and solves the "
                      "others; take singular=error", v);
    }
  }
  return CLI_OK;
}

/* gs_solve's options for the same preconditioner on the block-diagonal system (--compare). */
static const char *bd_precond_opts(int pc, int block, int agglomerate)
{
  static char buf[64];
  if (pc != GS_BATCH_PRECOND_BLOCK_JACOBI) return NULL;
  snprintf(buf, sizeof buf, "block=%d,agglomerate=%d", block, agglomerate);
  return buf;
}

/* "gmres(30) + block-jacobi(8)" */
static void batch_solve_label(char *buf, size_t len, const char *solve, gs_method_t m,
                              int restart, int pc, int block)
{
  int n = snprintf(buf, len, "%s", solve);
  if (m == GS_SOLVER_GMRES && n < (int)len) n += snprintf(buf + n, len - (size_t)n, "(%d)", restart);
  if (pc != GS_BATCH_PRECOND_NONE && n < (int)len)
    n += snprintf(buf + n, len - (size_t)n, " + %s", gs_batch_precond_name((gs_batch_precond_t)pc));
  if (pc == GS_BATCH_PRECOND_BLOCK_JACOBI && n < (int)len)
    snprintf(buf + n, len - (size_t)n, "(%d)", block);
}

/* The problems that stopped with a detail (a preconditioner that could not be set up, GMRES's
 * causes), each named with its row (1-based, as the Matrix Market file): the first ten. */
static void print_refusals(const gs_batch_stats_t *st, int count, const inputs_t *in)
{
  int shown = 0, total = 0;
  for (int i = 0; i < count; ++i) {
    if (!st[i].detail || !*st[i].detail) continue;
    if (++total > 10) continue;
    printf("  problem %d (%d rows): %s: %s", i, (int)in->A[i]->m, gs_reason_string(st[i].reason),
           st[i].detail);
    if (st[i].detail_row >= 0) printf(" (row %d)", st[i].detail_row + 1);
    printf("\n");
    ++shown;
  }
  if (total > shown) printf("  ... and %d more problems stopped with a cause\n", total - shown);
}

int cmd_batch(int argc, char **argv)
{
  const char *path = NULL, *gen = NULL, *rows = "10:2000", *format = NULL, *v;
  long count = 0, runs = 50, loop_max = 1000;
  unsigned long long seed = 1;
  int json = 0, no_base = 0, compare = 0, shared = 0, rc = CLI_OK, r;
  cli_solve_opts_t so; /* --solve METHOD, --precond / --jacobi, --precond-opt, --restart,
                          --rtol, --atol, --maxit */
  cli_solve_opts_init(&so, CLI_SOLVE_BATCH);
  static char usage[16384]; /* the help, with the batched methods and preconditioners */
  cli_solve_help(usage, sizeof usage, usage_text, CLI_SOLVE_BATCH);
  const cli_switch_t sw[] = {{"--json", NULL, &json},
                             {"--no-baselines", NULL, &no_base}, {"--compare", NULL, &compare},
                             {"--shared", NULL, &shared}, {NULL, NULL, NULL}};
  for (int i = 1, np = 0; i < argc; ++i) {
    if ((r = cli_solve_opt(&so, argc, argv, &i)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      continue;
    }
#define OPT(name) ((r = cli_opt(argc, argv, &i, name, &v)) != 0)
    if (OPT("--gen")) gen = v;
    else if (OPT("--count")) r = r < 0 ? r : cli_parse_int("--count", v, 1, 100000000, &count);
    else if (OPT("--rows")) rows = v;
    else if (OPT("--seed")) r = r < 0 ? r : cli_parse_u64("--seed", v, &seed);
    else if (OPT("--format")) format = v;
    else if (OPT("--runs")) r = r < 0 ? r : cli_parse_int("--runs", v, 1, 100000, &runs);
    else if (OPT("--loop-max")) r = r < 0 ? r : cli_parse_int("--loop-max", v, 0, 100000000, &loop_max);
    else {
      r = cli_arg_switch(argv[i], usage, sw);
      if (r == 2) return CLI_OK;
      if (r == 0 && (r = cli_arg_positional("batch", argv[i], &path, 1, &np,
                                            "more than one input given ('%s')")) != CLI_OK)
        return r;
      continue;
    }
#undef OPT
    if (r < 0) return CLI_BAD_INPUT;
  }
  if (!!path + !!gen != 1)
    return cli_fail(CLI_BAD_INPUT, "batch: give one input: a folder, a list file or --gen KIND");
  if (shared && !gen)
    return cli_fail(CLI_BAD_INPUT, "batch: --shared needs --gen (one generated pattern for all "
                    "problems)");
  long rmin = 0, rmax = 0;
  {
    char *colon = strchr(rows, ':'), *end = NULL;
    rmin = strtol(rows, &end, 10);
    rmax = colon ? strtol(colon + 1, NULL, 10) : rmin;
    if (end == rows || rmin < 1 || rmax < rmin || rmax > 100000000)
      return cli_fail(CLI_BAD_INPUT, "batch: invalid value '%s' for --rows (MIN:MAX, 1 <= MIN <= MAX)", rows);
  }
  /* the batched block-Jacobi's own limits first (the registry's allow blocks up to 32) */
  int block = 8, agglomerate = 1;
  if (so.solver && (rc = batch_precond_opts(so.precond, so.precond_opts, &block, &agglomerate)))
    return rc;
  if ((rc = cli_solve_opts_finish(&so)) != CLI_OK) return rc;
  const char *solve = so.solver; /* NULL: no solve */
  const gs_method_t method = so.o.method;
  const int pc = solve ? gs_batch_precond_find(so.precond) : 0; /* checked by finish */
  const double rtol = so.o.rtol, atol = so.o.atol;
  const long maxit = so.o.maxit;
  if (format && strcmp(format, "all") && strcmp(format, "auto")) {
    int ok = 0;
    for (int k = 0; k < gs_batch_format_count(); ++k) ok |= !strcmp(format, gs_batch_format_name(k));
    if (!ok) return cli_fail(CLI_BAD_INPUT, "batch: unknown kernel '%s' for --format", format);
  }
  if (!format && !solve) format = "all";
  const int all = format && !strcmp(format, "all");

  inputs_t in = {NULL, 0};
  gs_csr_t *pattern = NULL; /* --shared: the one pattern and every problem's values */
  double *values = NULL;
  if (gen && shared) {
    gs_status_t st = gen_shared(gen, count > 0 ? (int)count : 1000, (gs_idx_t)rmin,
                                (gs_idx_t)rmax, (uint64_t)seed, &in, &pattern, &values);
    if (st != GS_SUCCESS) {
      free_inputs(&in);
      gs_csr_destroy(&pattern);
      free(values);
      return cli_fail_status(st);
    }
  } else if (gen) {
    gs_status_t st = gs_batch_gen(&in.A, gen, count > 0 ? (int)count : 1000, (gs_idx_t)rmin,
                                  (gs_idx_t)rmax, (uint64_t)seed);
    if (st != GS_SUCCESS) return cli_fail_status(st);
    in.count = count > 0 ? (int)count : 1000;
  } else if ((rc = load_inputs(path, count, &in)) != CLI_OK) {
    return rc;
  }

  gs_context_t *ctx = NULL;
  gs_batch_t *B = NULL;
  gs_csr_t *BD = NULL;
  double *h = NULL, *dx = NULL, *dy = NULL, *db = NULL;
  row_t rowsv[32];
  int nrows = 0;
  gs_status_t st = GS_SUCCESS;
  if ((rc = cli_context(&ctx)) != CLI_OK) goto out;
  st = pattern ? gs_batch_create_shared(&B, ctx, in.count, pattern, values)
               : gs_batch_create(&B, ctx, in.count, (const gs_csr_t *const *)in.A);
  if (st != GS_SUCCESS) goto fail;
  const gs_off_t *ro = gs_batch_row_offsets(B), *co = gs_batch_col_offsets(B);
  const size_t nx = (size_t)co[in.count], ny = (size_t)ro[in.count];
  const size_t nmax = nx > ny ? nx : ny;
  h = malloc((nmax + 1) * sizeof *h);
  if (!h) { st = GS_ERR_HOST_MEMORY; goto fail; }
  if ((st = gs_dmalloc(ctx, (void **)&dx, (nx + 1) * 8, "x")) != GS_SUCCESS ||
      (st = gs_dmalloc(ctx, (void **)&dy, (ny + 1) * 8, "y")) != GS_SUCCESS)
    goto fail;
  fill_x(h, nx);
  if ((st = gs_copy_to_device(ctx, dx, h, nx * 8)) != GS_SUCCESS) goto fail;
  double bw = 0.0;
  if (gs_device_copy_bandwidth(ctx, &bw) != GS_SUCCESS) bw = 0.0;
  const char *why = NULL, *auto_name = gs_batch_auto_format(B, &why);
  double bd_cusparse_s = NAN, strided_s = NAN; /* baselines' seconds, NaN when not run */

  if (format) {
    if (!no_base && block_diagonal(&in, &BD) != GS_SUCCESS) BD = NULL;
    gs_matrix_t *M = NULL;
    if (BD && gs_matrix_create(&M, ctx, BD) != GS_SUCCESS) M = NULL;
    /* baselines first, so that the kernels' speed-ups are known when their rows are made */
    const char *base[] = {"cusparse-csr", "csr-vector", "hola"};
    for (int b = 0; M && b < 3; ++b) {
      gs_spmv_t *S = NULL;
      row_t *R = &rowsv[nrows];
      memset(R, 0, sizeof *R);
      R->speedup = R->speedup_strided = NAN;
      snprintf(R->name, sizeof R->name, "block-diagonal %s", base[b]);
      if (gs_spmv_create_timed(&S, ctx, M, base[b], NULL, NULL) != GS_SUCCESS) continue;
      double t = device_seconds(S, dx, dy);
      gs_copy_to_host(ctx, h, dy, ny * 8);
      double *xh = malloc((nx + 1) * 8);
      fill_x(xh, nx);
      R->err = gs_spmv_rel_error(BD, GS_OP_N, 1.0, xh, 0.0, NULL, h);
      free(xh);
      R->us = t * 1e6;
      R->gbs = R->xfloor = R->gflops = NAN;
      if (b == 0) bd_cusparse_s = t;
      gs_spmv_destroy(&S);
      ++nrows;
    }
    /* a loop of one cusparse-csr product per problem (small batches only: ~10 us a call) */
    if (!no_base && in.count <= loop_max) {
      gs_matrix_t **Ms = calloc((size_t)in.count, sizeof *Ms);
      gs_spmv_t **Ss = calloc((size_t)in.count, sizeof *Ss);
      int ok = Ms && Ss;
      for (int i = 0; ok && i < in.count; ++i)
        ok = gs_matrix_create(&Ms[i], ctx, in.A[i]) == GS_SUCCESS &&
             gs_spmv_create(&Ss[i], ctx, Ms[i], "cusparse-csr", NULL) == GS_SUCCESS;
      if (ok) {
        double t[7];
        for (int rep = 0; rep < 8 && ok; ++rep) {
          gs_context_sync(ctx);
          double t0 = cli_now();
          for (int i = 0; i < in.count && ok; ++i)
            ok = gs_spmv_apply(Ss[i], GS_OP_N, 1.0, dx + co[i], 0.0, dy + ro[i]) == GS_SUCCESS;
          gs_context_sync(ctx);
          if (rep) t[rep - 1] = cli_now() - t0; /* the first loop warms up */
        }
        row_t *R = &rowsv[nrows++];
        memset(R, 0, sizeof *R);
        snprintf(R->name, sizeof R->name, "loop of %d cusparse-csr", in.count);
        R->us = gs_median(t, 7) * 1e6;
        R->gbs = R->xfloor = R->gflops = R->speedup = R->speedup_strided = R->err = NAN;
      }
      for (int i = 0; Ss && Ms && i < in.count; ++i) {
        gs_spmv_destroy(&Ss[i]);
        gs_matrix_destroy(&Ms[i]);
      }
      free(Ss);
      free(Ms);
    }
    gs_matrix_destroy(&M);
    /* cuSPARSE's strided batches (vendor entries of the batched table): with the baselines, or
     * alone when named; "n/a (patterns differ)" unless the batch is uniform */
    int format_vendor = 0;
    for (int k = 0; k < gs_batch_format_count(); ++k)
      if ((gs_batch_format_flags(k) & GS_BATCH_FORMAT_VENDOR) && !strcmp(format, gs_batch_format_name(k)))
        format_vendor = 1;
    for (int k = 0; k < gs_batch_format_count(); ++k) {
      const char *name = gs_batch_format_name(k);
      if (!(gs_batch_format_flags(k) & GS_BATCH_FORMAT_VENDOR)) continue;
      if (strcmp(format, name) && (no_base || format_vendor)) continue;
      row_t *R = &rowsv[nrows];
      memset(R, 0, sizeof *R);
      snprintf(R->name, sizeof R->name, "strided %s", name);
      if (time_batched(ctx, B, &in, name, (int)runs, bw, dx, dy, h, R) != GS_SUCCESS) {
        R->us = NAN; /* a baseline that cannot run (memory for its workspace) is a row, not an error */
        snprintf(R->note, sizeof R->note, "failed: %s", gs_last_error());
      }
      if (isfinite(R->us) && (isnan(strided_s) || R->us * 1e-6 < strided_s)) strided_s = R->us * 1e-6;
      ++nrows;
    }
    for (int k = -1; k < gs_batch_format_count(); ++k) {
      const char *name = k < 0 ? "auto" : gs_batch_format_name(k);
      if (k >= 0 && (gs_batch_format_flags(k) & GS_BATCH_FORMAT_VENDOR)) continue; /* above */
      if (!all && strcmp(format, name)) continue;
      if (k < 0 && all) continue; /* auto is one of the rows already */
      row_t *R = &rowsv[nrows];
      memset(R, 0, sizeof *R);
      snprintf(R->name, sizeof R->name, "%s", name);
      if ((st = time_batched(ctx, B, &in, name, (int)runs, bw, dx, dy, h, R)) != GS_SUCCESS) goto fail;
      ++nrows;
    }
    /* every row against the same byte floor (the batch's CSR arrays with 32-bit indices, x and
     * y: gs_batch_mem_t.floor_bytes), and the speed-ups over the block-diagonal cuSPARSE product
     * and the faster strided one */
    const double floor_bytes = (double)(ny + (size_t)in.count) * 4.0 +
                               (double)gs_batch_nnz(B) * 12.0 + (double)(nx + ny) * 8.0;
    for (int k = 0; k < nrows; ++k) {
      row_t *R = &rowsv[k];
      if (isnan(R->us)) continue;
      const double t = R->us * 1e-6;
      R->gbs = floor_bytes / t * 1e-9;
      R->xfloor = bw > 0 ? t / (floor_bytes / bw) : NAN;
      R->gflops = 2.0 * (double)gs_batch_nnz(B) / t * 1e-9;
      R->speedup = bd_cusparse_s / t;
      R->speedup_strided = strided_s / t;
    }
    st = GS_SUCCESS;
  }

  gs_batch_stats_t *stats = NULL;
  gs_batch_summary_t sum;
  gs_solve_stats_t bd_stats;
  int bd_done = 0;
  if (solve) {
    gs_batch_solve_opts_t o;
    gs_batch_solve_opts_default(&o);
    o.method = method;
    o.rtol = rtol;
    o.atol = atol;
    o.maxit = (int)maxit;
    o.precond = (gs_batch_precond_t)pc;
    o.block = block;
    o.agglomerate = agglomerate;
    o.restart = so.o.restart;
    for (size_t k = 0; k < ny; ++k) h[k] = 1.0;
    stats = calloc((size_t)in.count, sizeof *stats);
    if (!stats) { st = GS_ERR_HOST_MEMORY; goto fail; }
    if ((st = gs_dmalloc(ctx, (void **)&db, (ny + 1) * 8, "b")) != GS_SUCCESS ||
        (st = gs_copy_to_device(ctx, db, h, ny * 8)) != GS_SUCCESS)
      goto fail;
    /* one untimed solve first: the first launch pays the module's load */
    if ((st = gs_batch_solve(B, &o, db, dx, NULL, NULL)) != GS_SUCCESS ||
        (st = gs_batch_solve(B, &o, db, dx, stats, &sum)) != GS_SUCCESS)
      goto fail;
    if (sum.converged < in.count) rc = CLI_NOT_CONVERGED;
    if (compare) { /* the whole batch as one system through gs_solve (csr-vector) */
      if (!BD && block_diagonal(&in, &BD) != GS_SUCCESS) BD = NULL;
      gs_matrix_t *M = NULL;
      gs_spmv_t *S = NULL;
      gs_precond_t *P = NULL;
      gs_solve_opts_t so;
      gs_solve_opts_default(&so);
      so.method = method;
      so.rtol = rtol;
      so.atol = atol;
      so.maxit = (int)maxit;
      so.restart = o.restart;
      if (BD && gs_matrix_create(&M, ctx, BD) == GS_SUCCESS &&
          gs_spmv_create(&S, ctx, M, "csr-vector", NULL) == GS_SUCCESS &&
          (pc == GS_BATCH_PRECOND_NONE ||
           gs_precond_create_opts(&P, ctx, M, gs_batch_precond_name((gs_batch_precond_t)pc),
                                  bd_precond_opts(pc, block, agglomerate)) == GS_SUCCESS)) {
        bd_done = gs_solve(ctx, &so, S, P, db, dx, &bd_stats) == GS_SUCCESS &&
                  gs_solve(ctx, &so, S, P, db, dx, &bd_stats) == GS_SUCCESS;
      }
      gs_precond_destroy(&P);
      gs_spmv_destroy(&S);
      gs_matrix_destroy(&M);
    }
  }

  /* ---- report ---- */
  if (json) {
    cli_json_t j;
    json_begin(&j, stdout);
    json_int(&j, "problems", in.count);
    json_int(&j, "rows", (long long)ny);
    json_int(&j, "cols", (long long)nx);
    json_int(&j, "nnz", (long long)gs_batch_nnz(B));
    json_str(&j, "device", gs_context_device_name(ctx));
    json_num(&j, "copy_bandwidth_gbs", bw * 1e-9);
    json_str(&j, "auto", auto_name);
    json_str(&j, "auto_reason", why);
    if (format) {
      json_arr_begin(&j, "spmv");
      for (int k = 0; k < nrows; ++k) {
        json_obj_begin(&j, NULL);
        json_str(&j, "name", rowsv[k].name);
        json_num(&j, "median_us", rowsv[k].us);
        json_num(&j, "floor_gbs", rowsv[k].gbs);
        json_num(&j, "x_floor", rowsv[k].xfloor);
        json_num(&j, "gflops", rowsv[k].gflops);
        json_num(&j, "speedup_vs_blockdiag_cusparse", rowsv[k].speedup);
        json_num(&j, "speedup_vs_strided_cusparse", rowsv[k].speedup_strided);
        json_num(&j, "rel_error", rowsv[k].err);
        json_str(&j, "note", rowsv[k].note);
        json_obj_end(&j);
      }
      json_arr_end(&j);
    }
    if (solve) {
      json_obj_begin(&j, "solve");
      json_str(&j, "method", solve);
      json_bool(&j, "jacobi", pc == GS_BATCH_PRECOND_JACOBI);
      json_str(&j, "precond", gs_batch_precond_name((gs_batch_precond_t)pc));
      if (pc == GS_BATCH_PRECOND_BLOCK_JACOBI) {
        json_int(&j, "block", block);
        json_int(&j, "agglomerate", agglomerate);
      }
      if (method == GS_SOLVER_GMRES) json_int(&j, "restart", so.o.restart);
      json_int(&j, "converged", sum.converged);
      json_int(&j, "it_min", sum.it_min);
      json_int(&j, "it_median", sum.it_median);
      json_int(&j, "it_max", sum.it_max);
      json_num(&j, "seconds", sum.seconds);
      json_int(&j, "shared_memory_problems", sum.shared_problems);
      if (bd_done) {
        json_num(&j, "blockdiag_seconds", bd_stats.seconds_total);
        json_int(&j, "blockdiag_iterations", bd_stats.iterations);
        json_str(&j, "blockdiag_reason", gs_reason_string(bd_stats.reason));
      }
      json_arr_begin(&j, "problems");
      for (int i = 0; i < in.count; ++i) {
        json_obj_begin(&j, NULL);
        json_int(&j, "i", i);
        json_int(&j, "rows", in.A[i]->m);
        json_int(&j, "nnz", (long long)in.A[i]->nnz);
        json_str(&j, "reason", gs_reason_string(stats[i].reason));
        json_int(&j, "iterations", stats[i].iterations);
        json_num(&j, "rnorm0", stats[i].rnorm0);
        json_num(&j, "rnorm", stats[i].rnorm);
        json_num(&j, "true_residual", stats[i].true_residual_norm);
        json_num(&j, "rel_residual", stats[i].bnorm > 0 ? stats[i].true_residual_norm / stats[i].bnorm
                                                        : stats[i].true_residual_norm);
        json_str(&j, "detail", stats[i].detail);
        json_int(&j, "detail_row", stats[i].detail_row);
        json_obj_end(&j);
      }
      json_arr_end(&j);
      json_obj_end(&j);
    }
    json_end(&j);
  } else {
    printf("batch: %d problems, %lld rows, %lld nnz, device %s\n", in.count, (long long)ny,
           (long long)gs_batch_nnz(B), gs_context_device_name(ctx));
    printf("auto: %s (%s)\n", auto_name, why ? why : "");
    if (format) {
      printf("%-34s %10s %8s %8s %8s %9s %9s %9s  %s\n", "kernel", "median us", "GB/s", "x floor",
             "GFLOP/s", "vs bd-cus", "vs stride", "rel err", "layout");
      for (int k = 0; k < nrows; ++k) {
        const row_t *R = &rowsv[k];
        if (isnan(R->us)) {
          printf("%-34s %s\n", R->name, R->note);
          continue;
        }
        printf("%-34s %10.2f", R->name, R->us);
        print_num(R->gbs, 8, "%8.1f");
        print_num(R->xfloor, 8, "%8.2f");
        print_num(R->gflops, 8, "%8.1f");
        print_num(R->speedup, 9, "%9.2f");
        print_num(R->speedup_strided, 9, "%9.2f");
        print_num(R->err, 9, "%9.1e");
        printf("  %s\n", R->note);
      }
    }
    if (solve) {
      char label[96];
      batch_solve_label(label, sizeof label, solve, method, so.o.restart, pc, block);
      printf("solve: %s: converged %d of %d, iterations min %d median %d max %d, %.3f ms on the "
             "GPU (%d problems with vectors in shared memory)\n", label, sum.converged, in.count,
             sum.it_min, sum.it_median, sum.it_max, sum.seconds * 1e3, sum.shared_problems);
      print_refusals(stats, in.count, &in);
      if (bd_done)
        printf("block-diagonal gs_solve: %s in %d iterations, %.3f ms (%.2fx the batched solve)\n",
               gs_reason_string(bd_stats.reason), bd_stats.iterations,
               bd_stats.seconds_total * 1e3, bd_stats.seconds_total / sum.seconds);
    }
  }
  free(stats);
  goto out;
fail:
  rc = cli_fail_status(st);
out:
  gs_dfree(ctx, dx);
  gs_dfree(ctx, dy);
  gs_dfree(ctx, db);
  free(h);
  gs_csr_destroy(&BD);
  gs_batch_destroy(&B);
  gs_context_destroy(&ctx);
  free_inputs(&in);
  gs_csr_destroy(&pattern);
  free(values);
  return rc;
}
