/* apps/cmd_gen.c: `gpusolve gen KIND ...`: the papers' synthetic matrices as Matrix Market
 * (symmetric storage for the symmetric ones). Options of another kind are refused, the output
 * paths are checked before the matrix is made. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apps/cli.h"
#include "apps/cli_out.h"
#include "io/outfile.h"

static const char *usage_text =
    "usage: gpusolve gen KIND [OPTIONS] [-o FILE]\n\n"
    "Writes a synthetic matrix as Matrix Market to FILE or stdout: coordinate real symmetric\n"
    "(the lower triangle) for laplace, elasticity and convdiff --peclet 0, coordinate real\n"
    "general else.\n\n"
    "Kinds:\n"
    "  laplace --grid NX[xNY[xNZ]] --stencil 3|5|7|9|27\n"
    "          Laplacian stencil with Dirichlet boundaries, symmetric positive definite\n"
    "          (Bell & Garland's structured matrices, Table 2 of their SC09 paper); the grid\n"
    "          has the stencil's dimensions: 3 on NX, 5 and 9 on NXxNY, 7 and 27 on NXxNYxNZ\n"
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
    "          field pipe (default: a bent pipe), rotate, or random (from the seed)\n"
    "  elasticity --grid NXxNY [--young E] [--poisson NU] [--near-null FILE]\n"
    "          2D linear elasticity (plane strain, Q1 elements, border fixed), NX x NY nodes\n"
    "          of 2 unknowns (x, y interleaved: AMG's block=2), symmetric positive definite;\n"
    "          E (default 1e5) > 0, -1 < NU (default 0.3) < 0.5: PyAMG's\n"
    "          gallery.linear_elasticity((N, N)) for NXxNY = NxN. --near-null FILE writes its\n"
    "          3 rigid-body modes (n x 3 matrix array: x, y translation, rotation), the\n"
    "          near-null space of --precond-opt near_null=FILE\n\n"
    "  -o FILE  write to FILE (checked before the matrix is made; replaced only when complete,\n"
    "           keeping its mode; a link's target is written, a device or FIFO in place);\n"
    "           default stdout\n"
    "  --seed X random seed (default 1) of normal, pareto, random, powerlaw and convdiff\n"
    "           --field random: the same seed gives the same matrix\n\n"
    "An option of another kind is refused (gen laplace --seed 1: laplace draws nothing).\n\n"
    "Example: gpusolve gen laplace --grid 100x100x100 --stencil 27 -o lap27.mtx\n";

/* The options a kind takes (bits of opt_names), so that one meant for another kind is refused
 * instead of ignored. */
enum {
  O_GRID = 1 << 0, O_STENCIL = 1 << 1, O_ROWS = 1 << 2, O_COLS = 1 << 3, O_PER_ROW = 1 << 4,
  O_SIGMA = 1 << 5, O_K = 1 << 6, O_MEAN = 1 << 7, O_EXPONENT = 1 << 8, O_PECLET = 1 << 9,
  O_FIELD = 1 << 10, O_SEED = 1 << 11, O_YOUNG = 1 << 12, O_POISSON = 1 << 13,
  O_NEAR_NULL = 1 << 14, O_COUNT = 15
};
static const char *const opt_names[O_COUNT] = {
  "--grid", "--stencil", "--rows", "--cols", "--per-row", "--sigma", "--k", "--mean",
  "--exponent", "--peclet", "--field", "--seed", "--young", "--poisson", "--near-null"};
static const struct {
  const char *name;
  unsigned opts;
} kinds[] = {
  {"laplace", O_GRID | O_STENCIL},
  {"normal", O_ROWS | O_PER_ROW | O_SIGMA | O_SEED},
  {"pareto", O_ROWS | O_K | O_SEED},
  {"random", O_ROWS | O_COLS | O_PER_ROW | O_SEED},
  {"powerlaw", O_ROWS | O_MEAN | O_EXPONENT | O_SEED},
  {"convdiff", O_GRID | O_PECLET | O_FIELD | O_SEED},
  {"elasticity", O_GRID | O_YOUNG | O_POISSON | O_NEAR_NULL},
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

/* Options given that kind k does not take: the first is refused, naming what k takes. */
static int refuse_foreign(int k, unsigned given)
{
  for (int b = 0; b < O_COUNT; ++b) {
    if (!(given & (1u << b)) || (kinds[k].opts & (1u << b))) continue;
    char takes[160] = "";
    size_t n = 0;
    for (int t = 0; t < O_COUNT; ++t)
      if (kinds[k].opts & (1u << t))
        n += (size_t)snprintf(takes + n, sizeof takes - n, "%s%s", n ? ", " : "", opt_names[t]);
    return cli_fail(CLI_BAD_INPUT, "gen %s: %s does not apply to %s (it takes %s and -o)",
                    kinds[k].name, opt_names[b], kinds[k].name, takes);
  }
  return CLI_OK;
}

/* The rigid-body modes as a `matrix array` of n rows and 3 columns (column-major, %.17g), by
 * the rules of -o (io/outfile.h: a temporary renamed into place, so a failure leaves no partial
 * file). Returns CLI_OK or the exit code after the message. */
static int write_modes(const char *path, const gs_val_t *B, gs_idx_t n)
{
  gs_outfile_t o = {.fd = -1, .slot = -1};
  if (gs_outfile_open(&o, path) != GS_SUCCESS)
    return cli_fail(CLI_BAD_INPUT, "gen elasticity: --near-null: %s", gs_last_error());
  FILE *f = fdopen(o.fd, "w");
  if (!f) {
    const int e = errno;
    gs_outfile_abort(&o);
    return cli_fail(CLI_BAD_INPUT, "gen elasticity: --near-null %s: %s", path, strerror(e));
  }
  o.fd = -1; /* the stream owns it */
  int bad = fprintf(f, "%%%%MatrixMarket matrix array real general\n%d 3\n", (int)n) < 0;
  for (size_t i = 0; !bad && i < 3 * (size_t)n; ++i) bad = fprintf(f, "%.17g\n", B[i]) < 0;
  const int e = errno;
  if (fclose(f) != 0 || bad) {
    gs_outfile_abort(&o);
    return cli_fail(CLI_BAD_INPUT, "gen elasticity: --near-null %s: write failed: %s", path,
                    strerror(bad ? e : errno));
  }
  if (gs_outfile_commit(&o) != GS_SUCCESS)
    return cli_fail(CLI_BAD_INPUT, "gen elasticity: --near-null: %s", gs_last_error());
  return CLI_OK;
}

/* Whether a and b name one file (by name, or both existing with one inode). */
static int same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  if (!strcmp(a, b)) return 1;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* Dimensions written in a --grid value (already parsed): NX 1, NXxNY 2, NXxNYxNZ 3. */
static int grid_dims(const char *grid)
{
  int d = 1;
  for (const char *p = grid; *p; ++p) d += *p == 'x';
  return d;
}

int cmd_gen(int argc, char **argv)
{
  const char *kind = NULL, *out = NULL, *grid = NULL, *near_null = NULL, *v;
  long stencil = -1, rows = -1, cols = -1, per_row = -1;
  double sigma = -1, k = -1, mean = -1, exponent = 2.5, peclet = 10.0, young = 1e5,
         poisson = 0.3;
  const char *field = "pipe";
  unsigned long long seed = 1;
  unsigned given = 0;
  int nkind = 0;
  for (int i = 1; i < argc; ++i) {
    int r;
    const char *a = argv[i];
    if (cli_arg_switch(a, usage_text, NULL) == 2) return CLI_OK;
#define OPT(bit, name) ((r = cli_opt(argc, argv, &i, name, &v)) != 0 && (given |= (bit), 1))
    if (OPT(0, "-o")) {
      if (r < 0) return CLI_BAD_INPUT;
      out = v;
    } else if (OPT(O_GRID, "--grid")) {
      if (r < 0) return CLI_BAD_INPUT;
      grid = v;
    } else if (OPT(O_STENCIL, "--stencil")) {
      if (r < 0 || cli_parse_int("--stencil", v, 1, 27, &stencil)) return CLI_BAD_INPUT;
    } else if (OPT(O_ROWS, "--rows")) {
      if (r < 0 || cli_parse_int("--rows", v, 1, 2147483647L, &rows)) return CLI_BAD_INPUT;
    } else if (OPT(O_COLS, "--cols")) {
      if (r < 0 || cli_parse_int("--cols", v, 1, 2147483647L, &cols)) return CLI_BAD_INPUT;
    } else if (OPT(O_PER_ROW, "--per-row")) {
      if (r < 0 || cli_parse_int("--per-row", v, 1, 2147483647L, &per_row)) return CLI_BAD_INPUT;
    } else if (OPT(O_SIGMA, "--sigma")) {
      if (r < 0 || cli_parse_double("--sigma", v, 0.0, 1e300, &sigma)) return CLI_BAD_INPUT;
    } else if (OPT(O_K, "--k")) {
      if (r < 0 || cli_parse_double("--k", v, 1e-6, 1e6, &k)) return CLI_BAD_INPUT;
    } else if (OPT(O_MEAN, "--mean")) {
      if (r < 0 || cli_parse_double("--mean", v, 0.0, 2147483647.0, &mean)) return CLI_BAD_INPUT;
    } else if (OPT(O_EXPONENT, "--exponent")) {
      if (r < 0 || cli_parse_double("--exponent", v, 0.0, 1e300, &exponent)) return CLI_BAD_INPUT;
    } else if (OPT(O_PECLET, "--peclet")) {
      if (r < 0 || cli_parse_double("--peclet", v, 0.0, 1e300, &peclet)) return CLI_BAD_INPUT;
    } else if (OPT(O_FIELD, "--field")) {
      if (r < 0) return CLI_BAD_INPUT;
      field = v;
    } else if (OPT(O_SEED, "--seed")) {
      if (r < 0 || cli_parse_u64("--seed", v, &seed)) return CLI_BAD_INPUT;
    } else if (OPT(O_YOUNG, "--young")) {
      if (r < 0 || cli_parse_double("--young", v, 0.0, 1e300, &young)) return CLI_BAD_INPUT;
      if (young == 0.0)
        return cli_fail(CLI_BAD_INPUT, "invalid value '%s' for --young (a positive number)", v);
    } else if (OPT(O_POISSON, "--poisson")) {
      if (r < 0 || cli_parse_double("--poisson", v, -1.0, 0.5, &poisson)) return CLI_BAD_INPUT;
      if (poisson == -1.0 || poisson == 0.5)
        return cli_fail(CLI_BAD_INPUT, "invalid value '%s' for --poisson (strictly between -1 "
                        "and 0.5: plane strain is singular at the ends)", v);
    } else if (OPT(O_NEAR_NULL, "--near-null")) {
      if (r < 0) return CLI_BAD_INPUT;
      near_null = v;
    } else if ((r = cli_arg_positional("gen", a, &kind, 1, &nkind,
                                       "unexpected argument '%s'")) != CLI_OK) {
      return r;
    }
#undef OPT
  }
  if (!kind)
    return cli_fail(CLI_BAD_INPUT,
                    "gen: no kind given (laplace, normal, pareto, random, powerlaw, convdiff, "
                    "elasticity)");
  int kk = 0;
  while (kk < NKINDS && strcmp(kind, kinds[kk].name) != 0) ++kk;
  if (kk == NKINDS)
    return cli_fail(CLI_BAD_INPUT,
                    "gen: unknown kind '%s' (laplace, normal, pareto, random, powerlaw, "
                    "convdiff, elasticity)", kind);
  int rc = refuse_foreign(kk, given);
  if (rc != CLI_OK) return rc;
  long d[3] = {1, 1, 1};
  if (grid && cli_parse_grid(grid, d)) return CLI_BAD_INPUT;
  gs_flow_t flow = GS_FLOW_PIPE;

  /* Everything the user typed is checked before the matrix is made (a large one takes time) */
  if (!strcmp(kind, "laplace")) {
    if (!grid) return cli_fail(CLI_BAD_INPUT, "gen laplace: --grid is required");
    if (stencil < 0) return cli_fail(CLI_BAD_INPUT, "gen laplace: --stencil is required");
    /* a stencil on a grid of fewer dimensions is a contradiction, not a degenerate grid */
    const int sdim = stencil == 3 ? 1 : stencil == 5 || stencil == 9 ? 2 : 3;
    if ((stencil == 3 || stencil == 5 || stencil == 7 || stencil == 9 || stencil == 27) &&
        grid_dims(grid) < sdim)
      return cli_fail(CLI_BAD_INPUT, "gen laplace: --stencil %ld is a %dD stencil, but --grid %s "
                      "is %dD (give %s, e.g. %s)", stencil, sdim, grid, grid_dims(grid),
                      sdim == 2 ? "NXxNY" : "NXxNYxNZ",
                      sdim == 2 ? "--grid 100x100" : "--grid 100x100x100");
  } else if (!strcmp(kind, "normal")) {
    if (rows < 0 || per_row < 0 || sigma < 0)
      return cli_fail(CLI_BAD_INPUT, "gen normal: --rows, --per-row and --sigma are required");
  } else if (!strcmp(kind, "pareto")) {
    if (rows < 0 || k < 0)
      return cli_fail(CLI_BAD_INPUT, "gen pareto: --rows and --k are required");
  } else if (!strcmp(kind, "random")) {
    if (rows < 0 || per_row < 0)
      return cli_fail(CLI_BAD_INPUT, "gen random: --rows and --per-row are required");
  } else if (!strcmp(kind, "powerlaw")) {
    if (rows < 0 || mean < 0)
      return cli_fail(CLI_BAD_INPUT, "gen powerlaw: --rows and --mean are required");
  } else if (!strcmp(kind, "elasticity")) {
    if (!grid) return cli_fail(CLI_BAD_INPUT, "gen elasticity: --grid NXxNY is required");
    if (grid_dims(grid) != 2)
      return cli_fail(CLI_BAD_INPUT, "gen elasticity: --grid %s is %dD; elasticity is 2D (give "
                      "NXxNY, e.g. --grid 100x100)", grid, grid_dims(grid));
    if (2.0 * (double)d[0] * (double)d[1] > 2147483647.0)
      return cli_fail(CLI_BAD_INPUT, "gen elasticity: --grid %s has more than 2^31-1 unknowns "
                      "(2 a node)", grid);
    if (near_null) {
      const size_t len = strlen(near_null);
      if (len >= 3 && !strcmp(near_null + len - 3, ".gz"))
        return cli_fail(CLI_BAD_INPUT, "gen elasticity: --near-null %s: the modes are written "
                        "as plain text; give a name without .gz", near_null);
      if (out && same_file(out, near_null))
        return cli_fail(CLI_BAD_INPUT, "gen elasticity: --near-null and -o name the same file "
                        "(%s)", near_null);
      if ((rc = cli_out_check("gen", "--near-null", near_null, 0)) != CLI_OK) return rc;
    }
  } else { /* convdiff */
    if (!grid) return cli_fail(CLI_BAD_INPUT, "gen convdiff: --grid is required");
    if (grid_dims(grid) < 2)
      return cli_fail(CLI_BAD_INPUT, "gen convdiff: --grid %s is 1D; convdiff is 2D (NXxNY) or "
                      "3D (NXxNYxNZ)", grid);
    int found = 0;
    for (int f = GS_FLOW_PIPE; f <= GS_FLOW_RANDOM; ++f)
      if (!strcmp(field, gs_flow_name((gs_flow_t)f))) {
        flow = (gs_flow_t)f;
        found = 1;
      }
    if (!found)
      return cli_fail(CLI_BAD_INPUT,
                      "gen convdiff: unknown --field '%s' (pipe, rotate, random)", field);
    if ((given & O_SEED) && flow != GS_FLOW_RANDOM)
      return cli_fail(CLI_BAD_INPUT, "gen convdiff: --seed applies to --field random only "
                      "(the %s field draws nothing)", field);
  }
  if (out && (rc = cli_out_check("gen", "-o", out, 1)) != CLI_OK) return rc;

  gs_csr_t *A = NULL;
  gs_val_t *modes = NULL; /* elasticity --near-null */
  gs_status_t st;
  if (!strcmp(kind, "laplace"))
    st = gs_gen_laplace(&A, (gs_idx_t)d[0], (gs_idx_t)d[1], (gs_idx_t)d[2], (int)stencil);
  else if (!strcmp(kind, "normal"))
    st = gs_gen_normal(&A, (gs_idx_t)rows, (gs_idx_t)per_row, sigma, seed);
  else if (!strcmp(kind, "pareto"))
    st = gs_gen_pareto(&A, (gs_idx_t)rows, k, seed);
  else if (!strcmp(kind, "random"))
    st = gs_gen_random(&A, (gs_idx_t)rows, (gs_idx_t)(cols > 0 ? cols : rows), (gs_idx_t)per_row,
                       seed);
  else if (!strcmp(kind, "powerlaw"))
    st = gs_gen_powerlaw(&A, (gs_idx_t)rows, mean, exponent, seed);
  else if (!strcmp(kind, "elasticity"))
    st = gs_gen_elasticity(&A, (gs_idx_t)d[0], (gs_idx_t)d[1], young, poisson,
                           near_null ? &modes : NULL);
  else
    st = gs_gen_convdiff(&A, (gs_idx_t)d[0], (gs_idx_t)d[1], (gs_idx_t)d[2], peclet, flow, seed);
  if (st != GS_SUCCESS) return cli_fail_status(st);
  /* a symmetric generator's matrix mirrors itself exactly: its lower triangle says it all */
  const gs_symmetry_t storage = A->symmetry == GS_SYM_SYMMETRIC ? GS_SYM_SYMMETRIC
                                                                 : GS_SYM_GENERAL;
  st = out ? gs_mm_write_csr_sym(out, A, storage) : gs_mm_write_csr_stream_sym(stdout, A, storage);
  const gs_idx_t n = A->m;
  gs_csr_destroy(&A);
  if (st != GS_SUCCESS) {
    free(modes);
    return cli_fail_status(st);
  }
  if (!out && fflush(stdout) != 0) {
    free(modes);
    return cli_fail(CLI_BAD_INPUT, "gen: writing to stdout failed");
  }
  rc = modes ? write_modes(near_null, modes, n) : CLI_OK;
  free(modes);
  return rc;
}
