/* apps/cmd_spmv.c: `gpusolve spmv`: SpMV (and transpose) benchmark of every backend against
 * cuSPARSE in the same run: prepare time, device bytes, median and minimum apply time (CUDA
 * events after warm-up), GFLOP/s, effective GB/s from the backend's own byte model, fraction of
 * the measured copy bandwidth, speed-up over cusparse-csr and error against the host. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli.h"
#include "apps/cli_select.h"
#include "apps/cli_spmv.h"

static const char *usage_text =
    "usage: gpusolve spmv [A.mtx] [--format NAME,...|all] [--transpose] [--runs N] [--json]\n"
    "       gpusolve spmv --list\n\n"
    "Benchmarks y = A*x (and y = A^T*x with --transpose) with each SpMV format. Without a\n"
    "matrix it uses the built-in 27-point Laplacian on a 64^3 grid. Per format: prepare time,\n"
    "device bytes, median and minimum time of one product (CUDA events, after 10 warm-up\n"
    "runs; at least N runs (default 100) and 0.2 s, ending after 2 s once 10 are done),\n"
    "GFLOP/s (2 nnz / t), bytes per nonzero (B/nz) and effective GB/s from the format's own\n"
    "byte model, % of the device's measured copy bandwidth, speed-up over cusparse-csr in the\n"
    "same run, and the max relative error against the host CSR reference (of the double\n"
    "matrix: about 1e-7 in mixed and float precision).\n\n"
    "  --format LIST   comma-separated format names, or all (default); auto (a row of its\n"
    "                  own with all) is the automatic selection amortised over --runs\n"
    "                  products: which format it picked, and its time as a fraction of the\n"
    "                  best format of the run\n"
    "  --no-cache      auto: measure its candidates even when the cache knows the matrix\n"
    "  --transpose     also benchmark the transpose product where a format supports it;\n"
    "                  auto then chooses among the formats that have it\n"
    "  --runs N        minimum timed runs per format (default 100)\n"
    "  --reorder KIND  none (default), rcm, degree or auto: the products on P A P^T (square A;\n"
    "                  see solve --help and docs/reorder.md), checked against the host\n"
    "                  product of P A P^T; the ordering, its ms and the bandwidth are printed\n"
    "  --max-fill F    fill limit of the padded formats ELL/DIA (default 3)\n"
    "  --vector-width W  csr-vector as plain groups of W threads per row (1, 2, 4, 8, 16,\n"
    "                  32) instead of its default row blocks in shared memory\n"
    CLI_SPMV_OPT_HELP
    CLI_SPMV_PRECISION_HELP
    "                    (listed as unsupported; no auto row: auto times double products)\n"
    "  --json          one JSON document on stdout\n"
    "  --gpus LIST     the distributed product on several GPUs: see\n"
    "                  'gpusolve spmv --gpus 2 --help'\n"
    "  --list          list the formats, one per line: name, then summary; with --verbose\n"
    "                  also each format's options (--spmv-opt keys, defaults, ranges),\n"
    "                  'wide' for those that take more than 2^31-1 entries, 'mixed' and\n"
    "                  'float' for those with mixed- and float-precision kernels\n";

typedef struct row {
  const char *name;
  const char *status; /* "ok", "refused", "unsupported", "fail" */
  char note[256];
  double prepare_ms, med_ms, min_ms, gflops, gbs, frac, rel_err, speedup;
  double bytes_per_entry; /* the byte model's bytes per product over nnz (0 for nnz = 0) */
  size_t device_bytes, bytes;
  int runs;
} row_t;

static void print_table(const char *op, row_t *rows, int nrows, double bw)
{
  printf("\n%-14s %-4s %10s %10s %10s %10s %8s %6s %8s %6s %8s %9s  %s\n", "format", "op",
         "prep ms", "MiB dev", "med us", "min us", "GFLOP/s", "B/nz", "GB/s", "%copy", "vs cusp",
         "rel err", "note");
  for (int i = 0; i < nrows; ++i) {
    row_t *r = &rows[i];
    if (strcmp(r->status, "ok") != 0) {
      printf("%-14s %-4s %10s %10s %10s %10s %8s %6s %8s %6s %8s %9s  %s: %s\n", r->name, op, "-",
             "-", "-", "-", "-", "-", "-", "-", "-", "-", r->status, r->note);
      continue;
    }
    char sp[32] = "-";
    if (r->speedup > 0) snprintf(sp, sizeof sp, "%.2fx", r->speedup);
    printf("%-14s %-4s %10.2f %10.1f %10.2f %10.2f %8.1f %6.2f %8.1f %6.1f %8s %9.1e  %s\n",
           r->name, op, r->prepare_ms, r->device_bytes / 1048576.0, r->med_ms * 1e3,
           r->min_ms * 1e3, r->gflops, r->bytes_per_entry, r->gbs, bw > 0 ? 100.0 * r->frac : 0.0,
           sp, r->rel_err, r->note);
  }
}

static void json_rows(cli_json_t *j, const char *op, row_t *rows, int nrows)
{
  for (int i = 0; i < nrows; ++i) {
    row_t *r = &rows[i];
    json_obj_begin(j, NULL);
    json_str(j, "format", r->name);
    json_str(j, "op", op);
    json_str(j, "status", r->status);
    json_str(j, "note", r->note);
    if (!strcmp(r->status, "ok")) {
      json_num(j, "prepare_ms", r->prepare_ms);
      json_int(j, "device_bytes", (long long)r->device_bytes);
      json_int(j, "bytes_per_apply", (long long)r->bytes);
      json_num(j, "bytes_per_entry", r->bytes_per_entry);
      json_num(j, "median_us", r->med_ms * 1e3);
      json_num(j, "min_us", r->min_ms * 1e3);
      json_int(j, "runs", r->runs);
      json_num(j, "gflops", r->gflops);
      json_num(j, "gbs", r->gbs);
      json_num(j, "copy_fraction", r->frac);
      json_num(j, "speedup_vs_cusparse_csr", r->speedup > 0 ? r->speedup : NAN);
      json_num(j, "max_rel_err", r->rel_err);
    }
    json_obj_end(j);
  }
}

/* Times one op of a prepared product into its row: memory, median and minimum, rates, and the
 * error of the last product against the host reference. The device vectors are of S's type
 * (float for a float product, whose y comes back through h_yf); h_x holds the same values in
 * double. On failure the row says why. */
static gs_status_t time_row(row_t *r, gs_spmv_t *S, gs_op_t op, const gs_spmv_time_opts_t *topts,
                            const void *d_x, void *d_y, const double *h_x, double *h_y,
                            float *h_yf, double bw)
{
  gs_spmv_mem_t mem;
  gs_spmv_timing_t tm;
  const gs_csr_t *M = gs_matrix_host(gs_spmv_matrix(S));
  const int fl = gs_spmv_value_type(S) == GS_VALUE_FLOAT;
  gs_status_t st = gs_spmv_memory(S, &mem);
  if (st == GS_SUCCESS)
    st = fl ? gs_spmv_time_float(S, op, d_x, d_y, topts, &tm)
            : gs_spmv_time(S, op, d_x, d_y, topts, &tm);
  const gs_idx_t ylen = op == GS_OP_N ? M->m : M->n;
  if (st == GS_SUCCESS && fl) {
    st = gs_copy_to_host(gs_spmv_context(S), h_yf, d_y, (size_t)ylen * sizeof *h_yf);
    for (gs_idx_t i = 0; st == GS_SUCCESS && i < ylen; ++i) h_y[i] = h_yf[i];
  } else if (st == GS_SUCCESS) {
    st = gs_copy_to_host(gs_spmv_context(S), h_y, d_y, (size_t)ylen * sizeof *h_y);
  }
  if (st != GS_SUCCESS) {
    r->status = "fail";
    snprintf(r->note, sizeof r->note, "%s", gs_last_error());
    return st;
  }
  r->status = "ok";
  r->med_ms = 1e3 * tm.median_s;
  r->min_ms = 1e3 * tm.min_s;
  r->runs = tm.runs;
  r->device_bytes = mem.device_bytes;
  r->bytes = op == GS_OP_N ? mem.bytes_per_apply : mem.bytes_per_apply_t;
  r->gflops = 2.0 * (double)M->nnz / (r->med_ms * 1e-3) * 1e-9;
  r->gbs = (double)r->bytes / (r->med_ms * 1e-3) * 1e-9;
  r->bytes_per_entry = M->nnz > 0 ? (double)r->bytes / (double)M->nnz : 0.0;
  r->frac = bw > 0 ? r->gbs * 1e9 / bw : 0.0;
  r->rel_err = gs_spmv_rel_error(M, op, 1.0, h_x, 0.0, NULL, h_y);
  return GS_SUCCESS;
}

int cmd_spmv(int argc, char **argv)
{
  if (cli_has_opt(argc, argv, "--gpus") || cli_has_opt(argc, argv, "--distributed"))
    return cmd_spmv_dist(argc, argv);
  const char *path = NULL, *formats = "all", *v;
  int json = 0, transpose = 0, list = 0, rc = CLI_OK;
  long runs = 100;
  int verbose = 0, no_cache = 0, want_auto = 0;
  char opts[1024] = "";
  int reorder = GS_REORDER_NONE;
  const cli_switch_t sw[] = {{"--json", NULL, &json},       {"--transpose", NULL, &transpose},
                             {"--list", NULL, &list},       {"--verbose", "-v", &verbose},
                             {"--no-cache", NULL, &no_cache},
                             {NULL, NULL, NULL}};
  for (int i = 1, np = 0; i < argc; ++i) {
    int r;
    const char *a = argv[i];
    if ((r = cli_arg_switch(a, usage_text, sw)) != 0) {
      if (r == 2) return CLI_OK;
    } else if ((r = cli_opt(argc, argv, &i, "--format", &v)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      formats = v;
    } else if ((r = cli_opt(argc, argv, &i, "--reorder", &v)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      if ((reorder = gs_reorder_find(v)) < 0)
        return cli_fail(CLI_BAD_INPUT, "invalid value '%s' for --reorder (none, rcm, degree or "
                        "auto)", v);
    } else if ((r = cli_opt(argc, argv, &i, "--runs", &v)) != 0) {
      if (r < 0 || cli_parse_int("--runs", v, 1, 20000, &runs)) return CLI_BAD_INPUT;
    } else if ((r = cli_spmv_opt(argc, argv, &i, CLI_SPMV_MAX_FILL | CLI_SPMV_VECTOR_WIDTH | CLI_SPMV_OPT |
                                 CLI_SPMV_PRECISION, opts,
                                 sizeof opts)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
    } else if ((rc = cli_arg_positional("spmv", a, &path, 1, &np,
                                        "more than one matrix given ('%s')")) != CLI_OK) {
      return rc;
    }
  }
  if (list) {
    for (int i = 0; i < gs_spmv_backend_count(); ++i) {
      printf("%-14s %s\n", gs_spmv_backend_name(i), gs_spmv_backend_summary(i));
      if (verbose && (gs_spmv_backend_flags(i) & GS_SPMV_FLAG_WIDE))
        printf("%-14s   wide: takes matrices of more than 2^31-1 entries (64-bit offsets)\n", "");
      if (verbose && (gs_spmv_backend_flags(i) & GS_SPMV_FLAG_MIXED))
        printf("%-14s   mixed: takes --precision mixed (float values, double vectors)\n", "");
      if (verbose && (gs_spmv_backend_flags(i) & GS_SPMV_FLAG_FLOAT))
        printf("%-14s   float: takes --precision float (float values, vectors and sums)\n", "");
      gs_spmv_option_info_t o;
      for (int k = 0; verbose && gs_spmv_backend_option(i, k, &o); ++k)
        printf("%-14s   --spmv-opt %s.%s=V  %s (default %g, range [%g, %g])\n", "",
               gs_spmv_backend_name(i), o.key, o.help, o.def, o.min, o.max);
    }
    if (verbose)
      printf("\nA key without a format name (--spmv-opt max_fill=4) sets it for every format that\n"
             "has it; --max-fill F is max_fill=F, --vector-width W is csr-vector.width=W.\n");
    return CLI_OK;
  }

  /* Which backends: validate every name before any work. */
  const gs_precision_t prec = cli_spmv_precision(opts);
  const int fl = prec == GS_PRECISION_FLOAT, lowp = prec != GS_PRECISION_DOUBLE;
  int nb = gs_spmv_backend_count(), *sel = calloc((size_t)nb + 1, sizeof *sel), nsel = 0;
  if (!sel) return cli_fail(CLI_DEVICE, "out of host memory");
  if (!strcmp(formats, "all")) {
    for (int i = 0; i < nb; ++i) sel[nsel++] = i;
    want_auto = !lowp; /* auto's timings and cache are of double products */
  } else {
    char *copy = strdup(formats), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      if (!strcmp(t, "auto")) {
        if (lowp) {
          free(copy);
          free(sel);
          return cli_fail(CLI_BAD_INPUT, "spmv: auto selects among double products; with "
                          "--precision %s name the formats", gs_precision_string(prec));
        }
        want_auto = 1;
        continue;
      }
      int b = gs_spmv_backend_find(t);
      if (b < 0) {
        rc = cli_fail(CLI_BAD_INPUT, "unknown SpMV format '%s' (see 'gpusolve spmv --list')", t);
        free(copy);
        free(sel);
        return rc;
      }
      if (nsel < nb) sel[nsel++] = b;
    }
    free(copy);
  }

  gs_csr_t *H = NULL;
  const char *label = path;
  char preload[1024]; /* the CUDA start-up and the kernels' loading run while the matrix is read */
  cli_context_prefetch(cli_preload_list(preload, sizeof preload, formats, NULL));
  rc = path ? cli_load_matrix(path, &H) : cli_default_matrix(&H, &label);
  if (rc) {
    free(sel);
    return rc;
  }
  gs_context_t *ctx = NULL;
  gs_matrix_t *A = NULL;
  gs_reorder_t *R = NULL; /* --reorder: the products on P A P^T */
  gs_reorder_info_t rinfo = {0};
  double *h_x = NULL, *h_y = NULL;
  float *h_xf = NULL, *h_yf = NULL; /* float precision: x as uploaded, y as read back */
  void *d_x = NULL, *d_y = NULL;    /* of the products' vector type: vsize bytes an entry */
  row_t *rows[2] = {calloc((size_t)nsel + 1, sizeof(row_t)), calloc((size_t)nsel + 1, sizeof(row_t))};
  gs_status_t st = GS_SUCCESS;
  if (reorder != GS_REORDER_NONE && H->m != H->n) {
    rc = cli_fail(CLI_BAD_INPUT, "spmv: %s is %d x %d: --reorder %s renumbers rows and columns "
                  "alike and needs a square matrix", label, (int)H->m, (int)H->n,
                  gs_reorder_string((gs_reorder_kind_t)reorder));
    goto done;
  }
  if ((rc = cli_context(&ctx)) != CLI_OK) goto done;
  if (reorder != GS_REORDER_NONE &&
      ((st = gs_reorder_create(&R, ctx, H, (gs_reorder_kind_t)reorder,
                               (double)runs * (1 + transpose))) != GS_SUCCESS ||
       (st = gs_reorder_info(R, &rinfo)) != GS_SUCCESS))
    goto fail;
  if ((st = gs_matrix_create(&A, ctx, R ? gs_reorder_csr(R) : H)) != GS_SUCCESS) goto fail;
  const gs_csr_t *M = gs_matrix_host(A);
  const double upload_s = gs_matrix_upload_seconds(A); /* made with A: in no prepare below */
  size_t lx = (size_t)(M->m > M->n ? M->m : M->n) + 1;
  const size_t vsize = fl ? sizeof(float) : sizeof(double);
  h_x = malloc(lx * sizeof *h_x);
  h_y = malloc(lx * sizeof *h_y);
  if (fl) {
    h_xf = malloc(lx * sizeof *h_xf);
    h_yf = malloc(lx * sizeof *h_yf);
  }
  if (!h_x || !h_y || !rows[0] || !rows[1] || (fl && (!h_xf || !h_yf))) {
    rc = cli_fail(CLI_DEVICE, "out of host memory");
    goto done;
  }
  for (size_t i = 0; i < lx; ++i) {
    h_x[i] = 1.0 + (double)((i * 7919u) % 1000) / 1000.0;
    if (fl) { /* x generated in float; the reference reads the same values */
      h_xf[i] = (float)h_x[i];
      h_x[i] = h_xf[i];
    }
  }
  if ((st = gs_dmalloc(ctx, &d_x, lx * vsize, "x")) != GS_SUCCESS ||
      (st = gs_dmalloc(ctx, &d_y, lx * vsize, "y")) != GS_SUCCESS ||
      (st = gs_copy_to_device(ctx, d_x, fl ? (const void *)h_xf : (const void *)h_x,
                              lx * vsize)) != GS_SUCCESS)
    goto fail;

  double bw = 0.0; /* 0: not measured, the %copy column then reads 0 */
  if (gs_device_copy_bandwidth(ctx, &bw) != GS_SUCCESS) bw = 0.0;
  if (!json) {
    printf("matrix   %s: %d x %d, %lld nonzeros", label, M->m, M->n, (long long)M->nnz);
    if (upload_s > 0) printf(" (device CSR uploaded at creation in %.2f ms, in no prepare)",
                             1e3 * upload_s);
    printf("\n");
    printf("device   %s, copy bandwidth %.1f GB/s (device-to-device, read + write)\n",
           gs_context_device_name(ctx), bw * 1e-9);
    if (R)
      printf("reorder  %s%s: %.2f ms, bandwidth %d -> %d, x lines %lld -> %lld%s%s\n",
             gs_reorder_string(rinfo.kind), reorder == GS_REORDER_AUTO ? " (auto)" : "",
             1e3 * rinfo.seconds, (int)rinfo.bandwidth_before, (int)rinfo.bandwidth_after,
             rinfo.lines_before, rinfo.lines_after, *rinfo.note ? "; " : "", rinfo.note);
    if (lowp)
      printf("precision %s (%s)\n", gs_precision_string(prec),
             fl ? "float values, x, y and sums: byte models count 4 bytes a value and a vector "
                  "entry"
                : "float values, double x, y and sums");
  }
  int failures = 0;
  gs_spmv_time_opts_t topts;
  gs_spmv_time_opts_default(&topts);
  topts.min_runs = (int)runs;
  for (int k = 0; k < nsel; ++k) {
    const char *name = gs_spmv_backend_name(sel[k]);
    gs_spmv_t *S = NULL;
    double prep_s = 0.0;
    st = gs_spmv_create_timed(&S, ctx, A, name, opts, &prep_s);
    double prep = prep_s * 1e3;
    for (int o = 0; o < 1 + transpose; ++o) {
      row_t *r = &rows[o][k];
      gs_op_t op = o ? GS_OP_T : GS_OP_N;
      r->name = name;
      r->prepare_ms = prep;
      if (st != GS_SUCCESS) {
        /* a format without the asked precision is listed, as one without a fit */
        const int unsup = st == GS_ERR_UNSUPPORTED && lowp;
        r->status = st == GS_ERR_FORMAT_FILL ? "refused" : unsup ? "unsupported" : "fail";
        snprintf(r->note, sizeof r->note, "%s", gs_last_error());
        if (st != GS_ERR_FORMAT_FILL && !unsup) failures++;
        continue;
      }
      if (!gs_spmv_supports(S, op)) {
        r->status = "unsupported";
        snprintf(r->note, sizeof r->note, "no transpose kernel");
        continue;
      }
      if (time_row(r, S, op, &topts, d_x, d_y, h_x, h_y, h_yf, bw) != GS_SUCCESS) failures++;
      else snprintf(r->note, sizeof r->note, "%s", gs_spmv_describe(S));
    }
    gs_spmv_destroy(&S);
  }
  /* The auto row: the selection amortised over --runs products, timed like the others. */
  gs_selection_t asel;
  int have_auto = 0;
  if (want_auto) {
    gs_spmv_t *S = NULL;
    gs_select_opts_t so;
    gs_select_opts_default(&so);
    so.expected_products = (double)runs;
    /* --transpose runs as many A^T x products besides: they are timed and weighed too (and
     * only formats with A^T x qualify) */
    so.expected_products_t = transpose ? (double)runs : 0.0;
    so.use_cache = !no_cache;
    so.need_transpose = transpose;
    double t0 = cli_now();
    st = gs_spmv_create_auto(&S, ctx, A, opts, &so);
    if (st == GS_SUCCESS) st = gs_context_sync(ctx);
    const double prep = 1e3 * (cli_now() - t0);
    if (st == GS_SUCCESS) {
      asel = *gs_spmv_selection(S);
      have_auto = 1;
      cli_selection_warn(&asel);
    }
    for (int o = 0; o < 1 + transpose; ++o) {
      row_t *r = &rows[o][nsel];
      gs_op_t op = o ? GS_OP_T : GS_OP_N;
      r->name = "auto";
      r->prepare_ms = prep;
      if (st != GS_SUCCESS) {
        r->status = "fail";
        snprintf(r->note, sizeof r->note, "%s", gs_last_error());
        failures++;
        continue;
      }
      if (!gs_spmv_supports(S, op)) {
        r->status = "unsupported";
        snprintf(r->note, sizeof r->note, "%s has no transpose kernel", gs_spmv_name(S));
        continue;
      }
      if (time_row(r, S, op, &topts, d_x, d_y, h_x, h_y, NULL, bw) != GS_SUCCESS) {
        failures++;
        continue;
      }
      /* the oracle of this run: the fastest format timed above */
      int best = -1;
      for (int k = 0; k < nsel; ++k)
        if (!strcmp(rows[o][k].status, "ok") &&
            (best < 0 || rows[o][k].med_ms < rows[o][best].med_ms))
          best = k;
      if (best >= 0)
        snprintf(r->note, sizeof r->note, "picked %s: %.3f of the best (%s, %.2f us)",
                 gs_spmv_name(S), rows[o][best].med_ms / r->med_ms, rows[o][best].name,
                 1e3 * rows[o][best].med_ms);
      else
        snprintf(r->note, sizeof r->note, "picked %s", gs_spmv_name(S));
    }
    gs_spmv_destroy(&S);
    nsel++; /* the auto row is printed with the others */
  }
  /* Speed-up over cusparse-csr measured in this run. */
  for (int o = 0; o < 1 + transpose; ++o) {
    double base = 0.0;
    for (int k = 0; k < nsel; ++k)
      if (!strcmp(rows[o][k].name, "cusparse-csr") && !strcmp(rows[o][k].status, "ok"))
        base = rows[o][k].med_ms;
    for (int k = 0; k < nsel; ++k)
      if (base > 0 && !strcmp(rows[o][k].status, "ok")) rows[o][k].speedup = base / rows[o][k].med_ms;
  }
  if (json) {
    cli_json_t j;
    json_begin(&j, stdout);
    json_str(&j, "matrix", label);
    json_int(&j, "rows", M->m);
    json_int(&j, "cols", M->n);
    json_int(&j, "nnz", M->nnz);
    json_str(&j, "device", gs_context_device_name(ctx));
    json_str(&j, "precision", gs_precision_string(prec));
    json_num(&j, "copy_bandwidth_gbs", bw * 1e-9);
    cli_json_reorder(&j, R, &rinfo);
    json_num(&j, "library_warmup_ms", 1e3 * gs_context_warmup_seconds(ctx));
    json_num(&j, "matrix_upload_ms", 1e3 * upload_s); /* at creation: in no prepare */
    if (have_auto) cli_selection_json(&j, "auto", &asel);
    json_arr_begin(&j, "results");
    json_rows(&j, "N", rows[0], nsel);
    if (transpose) json_rows(&j, "T", rows[1], nsel);
    json_arr_end(&j);
    json_end(&j);
  } else {
    printf("warm-up  first use of cuBLAS and cuSPARSE %.2f ms, at context creation (no format "
           "is charged with it)\n", 1e3 * gs_context_warmup_seconds(ctx));
    print_table("N", rows[0], nsel, bw);
    if (transpose) print_table("T", rows[1], nsel, bw);
    if (have_auto) {
      printf("\n");
      cli_selection_line(stdout, &asel);
      if (verbose) cli_selection_details(stdout, &asel);
    }
  }
  rc = failures ? CLI_DEVICE : CLI_OK;
  if (failures) cli_fail(CLI_DEVICE, "spmv: %d format%s failed", failures, failures > 1 ? "s" : "");
  goto done;
fail:
  rc = cli_fail_status(st);
done:
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  free(h_x);
  free(h_y);
  free(h_xf);
  free(h_yf);
  free(rows[0]);
  free(rows[1]);
  free(sel);
  gs_matrix_destroy(&A);
  gs_reorder_destroy(&R);
  gs_context_destroy(&ctx);
  gs_csr_destroy(&H);
  return rc;
}
