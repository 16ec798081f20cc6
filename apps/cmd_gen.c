/* apps/cmd_gen.c: `gpusolve gen KIND ...`: the papers' synthetic matrices as Matrix Market. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "apps/cli.h"

static const char *usage_text =
    "usage: gpusolve gen KIND [OPTIONS] [-o FILE]\n\n"
    "Writes a synthetic matrix as Matrix Market (coordinate real general) to FILE or stdout.\n\n"
    "Kinds:\n"
    "  laplace --grid NX[xNY[xNZ]] --stencil 3|5|7|9|27\n"
    "          Laplacian stencil with Dirichlet boundaries, symmetric positive definite\n"
    "          (Bell & Garland's structured matrices, Table 2 of their SC09 paper)\n"
    "  normal  --rows N --per-row K --sigma S [--seed X]\n"
    "          K entries per row, columns normally distributed around the diagonal (HOLA Fig. 7)\n"
    "  pareto  --rows N --k K [--seed X]\n"
    "          row lengths 32 + Pareto(K), random columns (Bell & Garland Fig. 9)\n"
    "  random  --rows N [--cols M] --per-row K [--seed X]\n"
    "          K uniformly random columns per row\n"
    "  powerlaw --rows N --mean K [--exponent A] [--seed X]\n"
    "          scale-free graph: Zipf row lengths of mean K (P(length = d) ~ d^-A, A > 2,\n"
    "          default 2.5), columns drawn by the same popularity (Chung-Lu weights)\n"
    "  convdiff --grid NXxNY[xNZ] [--peclet P] [--field pipe|rotate|random] [--seed X]\n"
    "          upwind convection-diffusion (5-point 2D, 7-point 3D), nonsymmetric M-matrix:\n"
    "          P (default 10) is the largest cell Peclet number, 0 gives the Laplacian;\n"
    "          field pipe (default: a bent pipe), rotate, or random (from the seed)\n\n"
    "  -o FILE  write to FILE (no partial file is left on failure); default stdout\n"
    "  --seed X random seed (default 1): the same seed gives the same matrix\n\n"
    "Example: gpusolve gen laplace --grid 100x100x100 --stencil 27 -o lap27.mtx\n";

int cmd_gen(int argc, char **argv)
{
  const char *kind = NULL, *out = NULL, *grid = NULL, *v;
  long stencil = -1, rows = -1, cols = -1, per_row = -1;
  double sigma = -1, k = -1, mean = -1, exponent = 2.5, peclet = 10.0;
  const char *field = "pipe";
  unsigned long long seed = 1;
  int nkind = 0;
  for (int i = 1; i < argc; ++i) {
    int r;
    const char *a = argv[i];
    if (cli_arg_switch(a, usage_text, NULL) == 2) return CLI_OK;
#define OPT(name) ((r = cli_opt(argc, argv, &i, name, &v)) != 0)
    if (OPT("-o")) {
      if (r < 0) return CLI_BAD_INPUT;
      out = v;
    } else if (OPT("--grid")) {
      if (r < 0) return CLI_BAD_INPUT;
      grid = v;
    } else if (OPT("--stencil")) {
      if (r < 0 || cli_parse_int("--stencil", v, 1, 27, &stencil)) return CLI_BAD_INPUT;
    } else if (OPT("--rows")) {
      if (r < 0 || cli_parse_int("--rows", v, 1, 2147483647L, &rows)) return CLI_BAD_INPUT;
    } else if (OPT("--cols")) {
      if (r < 0 || cli_parse_int("--cols", v, 1, 2147483647L, &cols)) return CLI_BAD_INPUT;
    } else if (OPT("--per-row")) {
      if (r < 0 || cli_parse_int("--per-row", v, 1, 2147483647L, &per_row)) return CLI_BAD_INPUT;
    } else if (OPT("--sigma")) {
      if (r < 0 || cli_parse_double("--sigma", v, 0.0, 1e300, &sigma)) return CLI_BAD_INPUT;
    } else if (OPT("--k")) {
      if (r < 0 || cli_parse_double("--k", v, 1e-6, 1e6, &k)) return CLI_BAD_INPUT;
    } else if (OPT("--mean")) {
      if (r < 0 || cli_parse_double("--mean", v, 0.0, 2147483647.0, &mean)) return CLI_BAD_INPUT;
    } else if (OPT("--exponent")) {
      if (r < 0 || cli_parse_double("--exponent", v, 0.0, 1e300, &exponent)) return CLI_BAD_INPUT;
    } else if (OPT("--peclet")) {
      if (r < 0 || cli_parse_double("--peclet", v, 0.0, 1e300, &peclet)) return CLI_BAD_INPUT;
    } else if (OPT("--field")) {
      if (r < 0) return CLI_BAD_INPUT;
      field = v;
    } else if (OPT("--seed")) {
      if (r < 0 || cli_parse_u64("--seed", v, &seed)) return CLI_BAD_INPUT;
    } else if ((r = cli_arg_positional("gen", a, &kind, 1, &nkind,
                                       "unexpected argument '%s'")) != CLI_OK) {
      return r;
    }
#undef OPT
  }
  if (!kind)
    return cli_fail(CLI_BAD_INPUT,
                    "gen: no kind given (laplace, normal, pareto, random, powerlaw, convdiff)");

  gs_csr_t *A = NULL;
  gs_status_t st;
  if (!strcmp(kind, "laplace")) {
    long d[3];
    if (!grid) return cli_fail(CLI_BAD_INPUT, "gen laplace: --grid is required");
    if (stencil < 0) return cli_fail(CLI_BAD_INPUT, "gen laplace: --stencil is required");
    if (cli_parse_grid(grid, d)) return CLI_BAD_INPUT;
    st = gs_gen_laplace(&A, (gs_idx_t)d[0], (gs_idx_t)d[1], (gs_idx_t)d[2], (int)stencil);
  } else if (!strcmp(kind, "normal")) {
    if (rows < 0 || per_row < 0 || sigma < 0)
      return cli_fail(CLI_BAD_INPUT, "gen normal: --rows, --per-row and --sigma are required");
    st = gs_gen_normal(&A, (gs_idx_t)rows, (gs_idx_t)per_row, sigma, seed);
  } else if (!strcmp(kind, "pareto")) {
    if (rows < 0 || k < 0) return cli_fail(CLI_BAD_INPUT, "gen pareto: --rows and --k are required");
    st = gs_gen_pareto(&A, (gs_idx_t)rows, k, seed);
  } else if (!strcmp(kind, "random")) {
    if (rows < 0 || per_row < 0)
      return cli_fail(CLI_BAD_INPUT, "gen random: --rows and --per-row are required");
    st = gs_gen_random(&A, (gs_idx_t)rows, (gs_idx_t)(cols > 0 ? cols : rows), (gs_idx_t)per_row,
                       seed);
  } else if (!strcmp(kind, "powerlaw")) {
    if (rows < 0 || mean < 0)
      return cli_fail(CLI_BAD_INPUT, "gen powerlaw: --rows and --mean are required");
    st = gs_gen_powerlaw(&A, (gs_idx_t)rows, mean, exponent, seed);
  } else if (!strcmp(kind, "convdiff")) {
    long d[3];
    gs_flow_t flow = GS_FLOW_PIPE;
    if (!grid) return cli_fail(CLI_BAD_INPUT, "gen convdiff: --grid is required");
    if (cli_parse_grid(grid, d)) return CLI_BAD_INPUT;
    int found = 0;
    for (int f = GS_FLOW_PIPE; f <= GS_FLOW_RANDOM; ++f)
      if (!strcmp(field, gs_flow_name((gs_flow_t)f))) {
        flow = (gs_flow_t)f;
        found = 1;
      }
    if (!found)
      return cli_fail(CLI_BAD_INPUT,
                      "gen convdiff: unknown --field '%s' (pipe, rotate, random)", field);
    st = gs_gen_convdiff(&A, (gs_idx_t)d[0], (gs_idx_t)d[1], (gs_idx_t)d[2], peclet, flow,
                         seed);
  } else {
    return cli_fail(CLI_BAD_INPUT,
                    "gen: unknown kind '%s' (laplace, normal, pareto, random, powerlaw, "
                    "convdiff)", kind);
  }
  if (st != GS_SUCCESS) return cli_fail_status(st);
  st = out ? gs_mm_write_csr(out, A) : gs_mm_write_csr_stream(stdout, A);
  gs_csr_destroy(&A);
  if (st != GS_SUCCESS) return cli_fail_status(st);
  if (!out && fflush(stdout) != 0) return cli_fail(CLI_BAD_INPUT, "gen: writing to stdout failed");
  return CLI_OK;
}
