/* apps/cmd_check.c: `gpusolve check A.mtx`: every backend's host layout against plain CSR and,
 * with a GPU, its device kernels (op N and T, several alpha/beta) against the host reference:
 * the user's way to trust a format on their own data. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli.h"
#include "apps/cli_spmv.h"

#define CHECK_TOL 1e-12

static const char *usage_text =
    "usage: gpusolve check A.mtx [--json] [--max-fill F] [--spmv-opt K=V]...\n\n"
    "Checks every SpMV format on this matrix: its host-side layout against plain CSR (needs no\n"
    "GPU) and, when a GPU is present, its device kernels for y = A*x and y = A^T*x with\n"
    "(alpha, beta) in {(1,0), (-1,1), (2.5,-0.5)} (y filled with NaN when beta = 0) against the\n"
    "host reference. A result passes when its norm-wise relative error is <= 1e-12.\n"
    "Per format: host ok|refused|unsupported|fail, device ok|unsupported|fail|skipped.\n"
    "Exit status 0 only when nothing failed.\n\n"
    "  --json            one JSON document on stdout\n"
    "  --max-fill F      fill limit of the padded formats (the option max_fill=F)\n"
    CLI_SPMV_OPT_HELP;

static const double cases[3][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}};

typedef struct result {
  const char *name, *host, *device;
  double err;
  char note[256];
} result_t;

static void note_err(result_t *r, double e)
{
  if (!(e <= r->err)) r->err = e; /* NaN/Inf stick */
}

static void check_host(const gs_csr_t *A, const char *name, const char *o,
                       const double *x, const double *y0, double *y, result_t *r)
{
  r->host = "ok";
  for (int op = 0; op < 2; ++op) {
    gs_idx_t len = op ? A->n : A->m;
    for (int c = 0; c < 3; ++c) {
      for (gs_idx_t i = 0; i < len; ++i) y[i] = cases[c][1] == 0.0 ? NAN : y0[i];
      gs_status_t st = gs_spmv_host_apply(name, A, o, op ? GS_OP_T : GS_OP_N, cases[c][0], x,
                                          cases[c][1], y);
      if (st == GS_ERR_FORMAT_FILL) {
        r->host = "refused";
        snprintf(r->note, sizeof r->note, "%s", gs_last_error());
        return;
      }
      if (st == GS_ERR_UNSUPPORTED && op == 1) break; /* no transpose: N alone decides */
      if (st != GS_SUCCESS) {
        r->host = "fail";
        snprintf(r->note, sizeof r->note, "%s", gs_last_error());
        return;
      }
      double e = gs_spmv_rel_error(A, op ? GS_OP_T : GS_OP_N, cases[c][0], x, cases[c][1], y0, y);
      note_err(r, e);
      if (!(e <= CHECK_TOL)) {
        r->host = "fail";
        snprintf(r->note, sizeof r->note, "host layout: error %.3g for op %c, alpha %g, beta %g",
                 e, op ? 'T' : 'N', cases[c][0], cases[c][1]);
      }
    }
  }
}

static void check_device(gs_context_t *ctx, gs_matrix_t *A, const char *name,
                         const char *o, const double *x, const double *y0, double *y,
                         double *d_x, double *d_y, result_t *r)
{
  const gs_csr_t *H = gs_matrix_host(A);
  gs_spmv_t *S = NULL;
  gs_status_t st = gs_spmv_create(&S, ctx, A, name, o);
  if (st == GS_ERR_FORMAT_FILL) {
    r->device = "skipped";
    return;
  }
  if (st != GS_SUCCESS) goto fail;
  r->device = "ok";
  size_t lx = (size_t)(H->m > H->n ? H->m : H->n);
  for (int op = 0; op < 2; ++op) {
    if (op == 1 && !gs_spmv_supports(S, GS_OP_T)) break; /* N alone decides */
    gs_idx_t len = op ? H->n : H->m;
    for (int c = 0; c < 3; ++c) {
      for (gs_idx_t i = 0; i < len; ++i) y[i] = cases[c][1] == 0.0 ? NAN : y0[i];
      if ((st = gs_copy_to_device(ctx, d_x, x, lx * sizeof *x)) != GS_SUCCESS ||
          (st = gs_copy_to_device(ctx, d_y, y, (size_t)len * sizeof *y)) != GS_SUCCESS ||
          (st = gs_spmv_apply(S, op ? GS_OP_T : GS_OP_N, cases[c][0], d_x, cases[c][1], d_y)) !=
              GS_SUCCESS ||
          (st = gs_copy_to_host(ctx, y, d_y, (size_t)len * sizeof *y)) != GS_SUCCESS)
        goto fail;
      double e = gs_spmv_rel_error(H, op ? GS_OP_T : GS_OP_N, cases[c][0], x, cases[c][1], y0, y);
      note_err(r, e);
      if (!(e <= CHECK_TOL)) {
        r->device = "fail";
        snprintf(r->note, sizeof r->note, "device: error %.3g for op %c, alpha %g, beta %g", e,
                 op ? 'T' : 'N', cases[c][0], cases[c][1]);
      }
    }
  }
  gs_spmv_destroy(&S);
  return;
fail:
  r->device = "fail";
  snprintf(r->note, sizeof r->note, "%s", gs_last_error());
  gs_spmv_destroy(&S);
}

int cmd_check(int argc, char **argv)
{
  const char *path = NULL;
  int json = 0, rc;
  char opts[1024] = "";
  const cli_switch_t sw[] = {{"--json", NULL, &json}, {NULL, NULL, NULL}};
  for (int i = 1, np = 0; i < argc; ++i) {
    int r;
    if ((r = cli_arg_switch(argv[i], usage_text, sw)) != 0) {
      if (r == 2) return CLI_OK;
    } else if ((r = cli_spmv_opt(argc, argv, &i, CLI_SPMV_MAX_FILL | CLI_SPMV_OPT, opts, sizeof opts)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
    } else if ((rc = cli_arg_positional("check", argv[i], &path, 1, &np,
                                        "more than one matrix given ('%s')")) != CLI_OK) {
      return rc;
    }
  }
  if (!path) return cli_fail(CLI_BAD_INPUT, "check: no matrix given (usage: gpusolve check A.mtx)");

  gs_csr_t *H = NULL;
  if ((rc = cli_load_matrix(path, &H)) != CLI_OK) return rc;
  int nb = gs_spmv_backend_count();
  size_t lx = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  double *x = malloc(lx * sizeof *x), *y0 = malloc(lx * sizeof *y0), *y = malloc(lx * sizeof *y);
  result_t *res = calloc((size_t)nb + 1, sizeof *res);
  gs_context_t *ctx = NULL;
  gs_matrix_t *A = NULL;
  double *d_x = NULL, *d_y = NULL;
  int have_gpu = gs_device_count() > 0;
  gs_status_t st = GS_SUCCESS;
  rc = CLI_OK;
  if (!x || !y0 || !y || !res) {
    rc = cli_fail(CLI_DEVICE, "out of host memory");
    goto done;
  }
  uint64_t s = 12345;
  for (size_t i = 0; i < lx; ++i) { /* fixed pseudo-random x and y in [-1, 1) */
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (double)(s >> 11) * 0x1.0p-52 - 1.0;
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    y0[i] = (double)(s >> 11) * 0x1.0p-52 - 1.0;
  }
  if (have_gpu) {
    if ((rc = cli_context(&ctx)) != CLI_OK) goto done;
    if ((st = gs_matrix_create(&A, ctx, H)) != GS_SUCCESS ||
        (st = gs_dmalloc(ctx, (void **)&d_x, lx * sizeof *d_x, "x")) != GS_SUCCESS ||
        (st = gs_dmalloc(ctx, (void **)&d_y, lx * sizeof *d_y, "y")) != GS_SUCCESS) {
      rc = cli_fail_status(st);
      goto done;
    }
  }
  int failed = 0;
  for (int b = 0; b < nb; ++b) {
    result_t *r = &res[b];
    r->name = gs_spmv_backend_name(b);
    r->err = 0.0;
    r->device = "skipped";
    check_host(H, r->name, opts, x, y0, y, r);
    if (have_gpu && strcmp(r->host, "refused") != 0)
      check_device(ctx, A, r->name, opts, x, y0, y, d_x, d_y, r);
    if (!strcmp(r->host, "fail") || !strcmp(r->device, "fail")) failed++;
  }
  if (json) {
    cli_json_t j;
    json_begin(&j, stdout);
    json_str(&j, "matrix", path);
    json_str(&j, "device", have_gpu ? gs_context_device_name(ctx) : NULL);
    json_arr_begin(&j, "results");
    for (int b = 0; b < nb; ++b) {
      json_obj_begin(&j, NULL);
      json_str(&j, "format", res[b].name);
      json_str(&j, "host", res[b].host);
      json_str(&j, "device", res[b].device);
      json_num(&j, "max_rel_err", res[b].err);
      if (res[b].note[0]) json_str(&j, "note", res[b].note);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    json_end(&j);
  } else {
    printf("matrix %s: %d x %d, %lld nonzeros; device: %s\n", path, H->m, H->n, (long long)H->nnz,
           have_gpu ? gs_context_device_name(ctx) : "none (device kernels skipped)");
    printf("%-14s %-8s %-8s %10s  %s\n", "format", "host", "device", "max error", "note");
    for (int b = 0; b < nb; ++b) {
      char err[32] = "-"; /* a refused layout computed nothing */
      if (strcmp(res[b].host, "refused") != 0) snprintf(err, sizeof err, "%.2e", res[b].err);
      printf("%-14s %-8s %-8s %10s  %s\n", res[b].name, res[b].host, res[b].device, err,
             res[b].note);
    }
  }
  /* A failing format is a finding about the data, not bad usage: exit 1 (as "not converged"). */
  if (failed)
    rc = cli_fail(CLI_NOT_CONVERGED, "check: %d format%s failed on %s", failed,
                  failed > 1 ? "s" : "", path);
done:
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  gs_matrix_destroy(&A);
  gs_context_destroy(&ctx);
  free(x);
  free(y0);
  free(y);
  free(res);
  gs_csr_destroy(&H);
  return rc;
}
