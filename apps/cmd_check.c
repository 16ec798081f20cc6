/* apps/cmd_check.c: `gpusolve check A.mtx`: every backend's host layout against plain CSR and,
 * with a GPU, its device kernels (op N and T, several alpha/beta) against the host reference:
 * the user's way to trust a format on their own data. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli.h"
#include "apps/cli_spmv.h"

#define CHECK_TOL 1e-12

static const char *usage_text =
    "usage: gpusolve check A.mtx [--host] [--json] [--max-fill F] [--spmv-opt K=V]...\n\n"
    "Checks every SpMV format on this matrix: its host-side layout against plain CSR (needs no\n"
    "GPU) and, when a GPU is present, its device kernels for y = A*x and y = A^T*x with\n"
    "(alpha, beta) in {(1,0), (-1,1), (2.5,-0.5)} (y filled with NaN when beta = 0) against the\n"
    "host reference. A result passes when its norm-wise relative error is <= 1e-12; with\n"
    "--precision mixed when every entry is within the bound derived from rounding the values\n"
    "to float and the double sums: 2 ((2 + u_f) gamma_{k+2} M_i + u_f |alpha| (|A||x|)_i),\n"
    "M_i = |alpha| (|A||x|)_i + |beta| |y_i|, k the terms of entry i, u_f = 2^-24, gamma_k =\n"
    "k u / (1 - k u), u = 2^-53 (max error then reports the largest error / bound); with\n"
    "--precision float x and y are float (rounded from the same draws) and every entry must be\n"
    "within 2 ((gamma_{k+2}(u_f) + gamma_{k+2}(u)) M_i + (k+2)(1 + |alpha|) FLT_MIN) of the\n"
    "double product of the values rounded to float, M_i of those values (the host layouts,\n"
    "which sum in double except hola's, bcoo's and bccoo's, which compute in float as their\n"
    "kernels do, are judged by the same bound).\n"
    "Per format: host ok|refused|unsupported|fail, device ok|unsupported|fail|skipped.\n"
    "Exit status 0 only when everything was checked and nothing failed: 1 when a format\n"
    "failed, 3 when there is no GPU (after the host results: the device kernels were not\n"
    "checked) unless --host asked for the host layouts alone.\n\n"
    "  --host            check the host layouts only (no GPU used or needed)\n"
    "  --json            one JSON document on stdout\n"
    "  --max-fill F      fill limit of the padded formats (the option max_fill=F)\n"
    CLI_SPMV_OPT_HELP
    CLI_SPMV_PRECISION_HELP;

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

static gs_precision_t g_prec; /* --precision: mixed and float results are judged by bound_ratio */

/* gamma_k(u) = k u / (1 - k u) (Higham, Lemma 3.1). */
static double gamma_k(double k, double u)
{
  const double ku = k * u;
  return ku < 1.0 ? ku / (1.0 - ku) : INFINITY;
}

/* The largest |y_i - ref_i| / bound_i of a mixed- or float-precision product y (y_in = y0 when
 * beta != 0; in float precision x and y0 hold float values). INFINITY for a non-finite result
 * or a NULL buffer.
 * Mixed: ref is the host double product of the double A. The product is that of values
 * a (1 + d), |d| <= u_f = 2^-24, so its exact value is off by at most u_f |alpha| (|A||x|)_i,
 * and its double rounding by gamma_{k+2} of its magnitudes, which are at most (1 + u_f) M_i
 * (Higham, Lemma 3.1, k terms, one product and one alpha each); the reference's own rounding
 * adds gamma_{k+2} M_i.
 * Float: ref is the host double product of the values rounded to float, A_f (the layout the
 * kernels read, exactly), so only the arithmetic differs: each term of y_i meets at most k + 2
 * float roundings (tests/testutil.c derives it), gamma_{k+2}(u_f) M_i with M_i of A_f, and the
 * reference's double rounding gamma_{k+2}(u) M_i; a float product that underflows (or is
 * flushed to zero) errs by less than FLT_MIN, at most k + 2 times, each scaled by at most
 * 1 + |alpha|.
 * The factor 2 is the test suites' GS_TEST_SPMV_C (extra passes: beta applied apart, chunks
 * added by atomics); the last term covers products that underflow. */
static double bound_ratio(const gs_csr_t *A, int trans, double alpha, const double *x,
                          double beta, const double *y0, const double *y)
{
  const int fl = g_prec == GS_PRECISION_FLOAT;
  const gs_idx_t len = trans ? A->n : A->m;
  double *ref = malloc(((size_t)len + 1) * sizeof *ref);
  double *ax = malloc(((size_t)len + 1) * sizeof *ax);
  double *cnt = calloc((size_t)len + 1, sizeof *cnt), worst = 0.0;
  if (!ref || !ax || !cnt) {
    worst = INFINITY;
    goto done;
  }
  for (gs_idx_t i = 0; i < len; ++i) {
    ref[i] = beta == 0.0 ? 0.0 : beta * y0[i];
    ax[i] = 0.0;
  }
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t out = trans ? A->col[p] : i, in = trans ? i : A->col[p];
      const double a = fl ? (double)(float)A->val[p] : A->val[p];
      ref[out] += alpha * a * x[in];
      ax[out] += fabs(a * x[in]);
      cnt[out] += 1.0;
    }
  for (gs_idx_t i = 0; i < len; ++i) {
    const double M = fabs(alpha) * ax[i] + (beta == 0.0 ? 0.0 : fabs(beta * y0[i]));
    const double k2 = cnt[i] + 2;
    const double bound =
        fl ? 2.0 * ((gamma_k(k2, GS_PRECISION_FLOAT_U) + gamma_k(k2, 0x1p-53)) * M +
                    k2 * (1.0 + fabs(alpha)) * FLT_MIN)
           : 2.0 * ((2.0 + GS_PRECISION_MIXED_U) * gamma_k(k2, 0x1p-53) * M +
                    GS_PRECISION_MIXED_U * fabs(alpha) * ax[i] +
                    (cnt[i] + 1) * (1.0 + fabs(alpha)) * 0x1p-1074);
    const double r = isfinite(y[i]) ? fabs(y[i] - ref[i]) / bound : INFINITY;
    if (!(r <= worst)) worst = r; /* NaN sticks */
  }
done:
  free(ref);
  free(ax);
  free(cnt);
  return worst;
}

/* Whether product y passes (mixed, float: the bounds above; double: CHECK_TOL norm-wise); the
 * error recorded for the table is the ratio to the bound, or the norm-wise error. */
static int judge(const gs_csr_t *A, int op, int c, const double *x, const double *y0,
                 const double *y, result_t *r, double *e)
{
  if (g_prec != GS_PRECISION_DOUBLE) {
    *e = bound_ratio(A, op, cases[c][0], x, cases[c][1], y0, y);
    note_err(r, *e);
    return *e <= 1.0;
  }
  *e = gs_spmv_rel_error(A, op ? GS_OP_T : GS_OP_N, cases[c][0], x, cases[c][1], y0, y);
  note_err(r, *e);
  return *e <= CHECK_TOL;
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
      if (st == GS_ERR_UNSUPPORTED && op == 0) { /* no kernels for this precision */
        r->host = "unsupported";
        snprintf(r->note, sizeof r->note, "%s", gs_last_error());
        return;
      }
      if (st == GS_ERR_UNSUPPORTED && op == 1) break; /* no transpose: N alone decides */
      if (st != GS_SUCCESS) {
        r->host = "fail";
        snprintf(r->note, sizeof r->note, "%s", gs_last_error());
        return;
      }
      double e = 0.0;
      if (!judge(A, op, c, x, y0, y, r, &e)) {
        r->host = "fail";
        snprintf(r->note, sizeof r->note, "host layout: error %.3g for op %c, alpha %g, beta %g",
                 e, op ? 'T' : 'N', cases[c][0], cases[c][1]);
      }
    }
  }
}

/* One product on the device from x and y (of lengths lx and len): double vectors, or for a float
 * product float copies (x and y hold float values then) and y read back widened. */
static gs_status_t device_product(gs_context_t *ctx, gs_spmv_t *S, gs_op_t op, double alpha,
                                  const double *x, size_t lx, double beta, double *y, size_t len,
                                  void *d_x, void *d_y, float *f)
{
  gs_status_t st;
  if (gs_spmv_value_type(S) != GS_VALUE_FLOAT) {
    if ((st = gs_copy_to_device(ctx, d_x, x, lx * sizeof *x)) != GS_SUCCESS ||
        (st = gs_copy_to_device(ctx, d_y, y, len * sizeof *y)) != GS_SUCCESS ||
        (st = gs_spmv_apply(S, op, alpha, d_x, beta, d_y)) != GS_SUCCESS)
      return st;
    return gs_copy_to_host(ctx, y, d_y, len * sizeof *y);
  }
  for (size_t i = 0; i < lx; ++i) f[i] = (float)x[i];
  if ((st = gs_copy_to_device(ctx, d_x, f, lx * sizeof *f)) != GS_SUCCESS) return st;
  for (size_t i = 0; i < len; ++i) f[i] = (float)y[i];
  if ((st = gs_copy_to_device(ctx, d_y, f, len * sizeof *f)) != GS_SUCCESS ||
      (st = gs_spmv_apply_float(S, op, (float)alpha, d_x, (float)beta, d_y)) != GS_SUCCESS ||
      (st = gs_copy_to_host(ctx, f, d_y, len * sizeof *f)) != GS_SUCCESS)
    return st;
  for (size_t i = 0; i < len; ++i) y[i] = f[i];
  return GS_SUCCESS;
}

static void check_device(gs_context_t *ctx, gs_matrix_t *A, const char *name,
                         const char *o, const double *x, const double *y0, double *y,
                         void *d_x, void *d_y, float *f, result_t *r)
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
      if ((st = device_product(ctx, S, op ? GS_OP_T : GS_OP_N, cases[c][0], x, lx, cases[c][1],
                               y, (size_t)len, d_x, d_y, f)) != GS_SUCCESS)
        goto fail;
      double e = 0.0;
      if (!judge(H, op, c, x, y0, y, r, &e)) {
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
  int json = 0, host_only = 0, rc;
  char opts[1024] = "";
  const cli_switch_t sw[] = {{"--json", NULL, &json}, {"--host", NULL, &host_only},
                             {NULL, NULL, NULL}};
  for (int i = 1, np = 0; i < argc; ++i) {
    int r;
    if ((r = cli_arg_switch(argv[i], usage_text, sw)) != 0) {
      if (r == 2) return CLI_OK;
    } else if ((r = cli_spmv_opt(argc, argv, &i, CLI_SPMV_MAX_FILL | CLI_SPMV_OPT | CLI_SPMV_PRECISION, opts,
                             sizeof opts)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
    } else if ((rc = cli_arg_positional("check", argv[i], &path, 1, &np,
                                        "more than one matrix given ('%s')")) != CLI_OK) {
      return rc;
    }
  }
  if (!path) return cli_fail(CLI_BAD_INPUT, "check: no matrix given (usage: gpusolve check A.mtx)");
  g_prec = cli_spmv_precision(opts);

  gs_csr_t *H = NULL;
  if ((rc = cli_load_matrix(path, &H)) != CLI_OK) return rc;
  int nb = gs_spmv_backend_count();
  size_t lx = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  double *x = malloc(lx * sizeof *x), *y0 = malloc(lx * sizeof *y0), *y = malloc(lx * sizeof *y);
  float *f = malloc(lx * sizeof *f); /* float precision's vectors on their way to the device */
  result_t *res = calloc((size_t)nb + 1, sizeof *res);
  gs_context_t *ctx = NULL;
  gs_matrix_t *A = NULL;
  void *d_x = NULL, *d_y = NULL; /* double-sized: room for float vectors too */
  char no_gpu[512] = ""; /* why there is no device: reported after the host results */
  int have_gpu = 0;
  gs_status_t st = GS_SUCCESS;
  rc = CLI_OK;
  if (!x || !y0 || !y || !f || !res) {
    rc = cli_fail(CLI_DEVICE, "out of host memory");
    goto done;
  }
  uint64_t s = 12345;
  for (size_t i = 0; i < lx; ++i) { /* fixed pseudo-random x and y in [-1, 1) */
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (double)(s >> 11) * 0x1.0p-52 - 1.0;
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    y0[i] = (double)(s >> 11) * 0x1.0p-52 - 1.0;
    if (g_prec == GS_PRECISION_FLOAT) { /* float vectors: every product reads these values */
      x[i] = (float)x[i];
      y0[i] = (float)y0[i];
    }
  }
  if (!host_only && gs_context_create(&ctx, 0) != GS_SUCCESS)
    snprintf(no_gpu, sizeof no_gpu, "%s", gs_last_error());
  have_gpu = ctx != NULL;
  if (have_gpu) {
    if ((st = gs_matrix_create(&A, ctx, H)) != GS_SUCCESS ||
        (st = gs_dmalloc(ctx, &d_x, lx * sizeof(double), "x")) != GS_SUCCESS ||
        (st = gs_dmalloc(ctx, &d_y, lx * sizeof(double), "y")) != GS_SUCCESS) {
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
    if (!strcmp(r->host, "unsupported")) r->device = "unsupported";
    if (have_gpu && strcmp(r->host, "refused") != 0 && strcmp(r->host, "unsupported") != 0)
      check_device(ctx, A, r->name, opts, x, y0, y, d_x, d_y, f, r);
    if (!strcmp(r->host, "fail") || !strcmp(r->device, "fail")) failed++;
  }
  if (json) {
    cli_json_t j;
    json_begin(&j, stdout);
    json_str(&j, "matrix", path);
    json_str(&j, "device", have_gpu ? gs_context_device_name(ctx) : NULL);
    if (no_gpu[0]) json_str(&j, "device_error", no_gpu);
    json_str(&j, "precision", gs_precision_string(g_prec));
    json_arr_begin(&j, "results");
    for (int b = 0; b < nb; ++b) {
      json_obj_begin(&j, NULL);
      json_str(&j, "format", res[b].name);
      json_str(&j, "host", res[b].host);
      json_str(&j, "device", res[b].device);
      json_num(&j, g_prec != GS_PRECISION_DOUBLE ? "max_bound_ratio" : "max_rel_err",
               res[b].err);
      if (res[b].note[0]) json_str(&j, "note", res[b].note);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    json_end(&j);
  } else {
    printf("matrix %s: %d x %d, %lld nonzeros; device: %s\n", path, H->m, H->n, (long long)H->nnz,
           have_gpu    ? gs_context_device_name(ctx)
           : host_only ? "not used (--host: device kernels skipped)"
                       : "none (device kernels skipped)");
    printf("%-14s %-8s %-8s %10s  %s\n", "format", "host", "device",
           g_prec != GS_PRECISION_DOUBLE ? "err/bound" : "max error", "note");
    for (int b = 0; b < nb; ++b) {
      char err[32] = "-"; /* a refused layout computed nothing */
      if (strcmp(res[b].host, "refused") != 0 && strcmp(res[b].host, "unsupported") != 0)
        snprintf(err, sizeof err, "%.2e", res[b].err);
      printf("%-14s %-8s %-8s %10s  %s\n", res[b].name, res[b].host, res[b].device, err,
             res[b].note);
    }
  }
  /* A failing format is a finding about the data, not bad usage: exit 1 (as "not converged"). */
  if (failed)
    rc = cli_fail(CLI_NOT_CONVERGED, "check: %d format%s failed on %s", failed,
                  failed > 1 ? "s" : "", path);
  else if (no_gpu[0]) /* not a pass: the device kernels, what check is mostly for, did not run */
    rc = cli_fail(CLI_DEVICE, "%s (check: the device kernels were not checked; --host checks "
                  "the host layouts alone)", no_gpu);
done:
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  gs_matrix_destroy(&A);
  gs_context_destroy(&ctx);
  free(x);
  free(y0);
  free(y);
  free(f);
  free(res);
  gs_csr_destroy(&H);
  return rc;
}
