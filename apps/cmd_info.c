/* apps/cmd_info.c: `gpusolve info A.mtx [--json] [--strict]`: the file and the matrix's
 * features; needs no GPU. */
#include <errno.h>
#include <string.h>

#include "apps/cli.h"
#include "gpusolve/select.h"

#define INFO_STR_(x) #x
#define INFO_STR(x) INFO_STR_(x)

static const char *usage_text =
    "usage: gpusolve info A.mtx [--json] [--strict]\n\n"
    "Prints the size, stored symmetry, value field (real, integer, pattern), entries stored in\n"
    "the file (before symmetric expansion), nonzeros (after it, duplicates summed, explicit\n"
    "zeros kept), row-length statistics, density, occupied diagonals and symmetry of a\n"
    "Matrix Market matrix (.mtx or .mtx.gz). Needs no GPU. Symmetry is measured as\n"
    "max |a_ij - a_ji| / max |a| (\"asymmetry\"); up to " INFO_STR(GS_SYMMETRY_RTOL)
    " the matrix counts as symmetric.\n"
    "The last line names the formats --format auto's rule stage would try, first choice first,\n"
    "and the rule row that fired (gpusolve select --rule: the same with the exclusions).\n\n"
    "  --json     one JSON document on stdout\n"
    "  --strict   refuse a symmetric file with entries on both sides of the diagonal (without\n"
    "             it: a warning, and each (i, j), (j, i) pair is summed); every command that\n"
    "             reads a matrix takes it\n";

int cmd_info(int argc, char **argv)
{
  const char *path = NULL;
  int json = 0;
  const cli_switch_t sw[] = {{"--json", NULL, &json}, {NULL, NULL, NULL}};
  for (int i = 1, np = 0; i < argc; ++i) {
    int r = cli_arg_switch(argv[i], usage_text, sw);
    if (r == 2) return CLI_OK;
    if (r == 0 && (r = cli_arg_positional("info", argv[i], &path, 1, &np,
                                          "more than one matrix given ('%s')")) != CLI_OK)
      return r;
  }
  if (!path) return cli_fail(CLI_BAD_INPUT, "info: no matrix given (usage: gpusolve info A.mtx)");

  gs_csr_t *A = NULL;
  gs_mm_info_t mi;
  int rc = cli_load_matrix_info(path, &A, &mi);
  if (rc) return rc;
  gs_features_t f;
  gs_status_t st = gs_csr_features(A, &f);
  /* what --format auto's rule stage would try first (no GPU needed; default options) */
  gs_select_features_t sf;
  gs_select_rule_t rule;
  rule.n = 0;
  if (st == GS_SUCCESS && gs_select_features_with(A, &f, &sf) == GS_SUCCESS &&
      gs_select_rule(&sf, NULL, 0, &rule) != GS_SUCCESS)
    rule.n = 0;
  gs_csr_destroy(&A);
  if (st != GS_SUCCESS) return cli_fail_status(st);

  if (json) {
    cli_json_t j;
    json_begin(&j, stdout);
    json_str(&j, "matrix", path);
    json_int(&j, "rows", f.rows);
    json_int(&j, "cols", f.cols);
    json_int(&j, "nnz", f.nnz);
    json_str(&j, "symmetry", gs_symmetry_string(f.symmetry));
    json_str(&j, "format", mi.array ? "array" : "coordinate");
    json_str(&j, "field", gs_mm_field_string(mi.field));
    json_int(&j, "stored_entries", mi.stored);
    json_num(&j, "density", f.density);
    json_num(&j, "row_mean", f.row_mean);
    json_num(&j, "row_std", f.row_std);
    json_int(&j, "row_min", f.row_min);
    json_int(&j, "row_max", f.row_max);
    json_int(&j, "empty_rows", f.empty_rows);
    json_int(&j, "diagonals", f.diagonals);
    json_bool(&j, "structurally_symmetric", f.structurally_symmetric);
    json_bool(&j, "numerically_symmetric", f.numerically_symmetric);
    json_num(&j, "asymmetry", f.asymmetry); /* null when not measurable (non-square) */
    json_bool(&j, "diagonal_full", f.diagonal_full);
    json_bool(&j, "diagonal_positive", f.diagonal_positive);
    if (rule.n > 0) {
      json_str(&j, "auto_rule", rule.names[0]);
      json_str(&j, "auto_rule_row", rule.row);
    }
    json_end(&j);
  } else {
    printf("matrix                 %s\n", path);
    printf("size                   %d x %d\n", f.rows, f.cols);
    printf("file                   %s %s %s, %lld %s stored\n",
           mi.array ? "array" : "coordinate", gs_mm_field_string(mi.field),
           gs_symmetry_string(mi.symmetry), (long long)mi.stored,
           mi.array ? "values" : "entries");
    printf("nonzeros               %lld (stored symmetry: %s)\n", (long long)f.nnz,
           gs_symmetry_string(f.symmetry));
    printf("density                %.6g\n", f.density);
    printf("row length             mean %.4g, std %.4g, min %lld, max %lld\n", f.row_mean,
           f.row_std, (long long)f.row_min, (long long)f.row_max);
    printf("empty rows             %d\n", f.empty_rows);
    printf("occupied diagonals     %d\n", f.diagonals);
    if (f.rows == f.cols) {
      /* the measured asymmetry max |a_ij - a_ji| / max |a|, so that a matrix symmetric only to
       * rounding is told from an exact one, and a nonsymmetric one says by how much */
      if (f.numerically_symmetric && f.asymmetry == 0.0)
        printf("symmetric              yes\n");
      else if (f.numerically_symmetric)
        printf("symmetric              yes (symmetric to %.2g)\n", f.asymmetry);
      else
        printf("symmetric              %s (asymmetry %.2g)\n",
               f.structurally_symmetric ? "pattern only" : "no", f.asymmetry);
      printf("diagonal               %s\n", f.diagonal_positive ? "full, positive"
                                            : f.diagonal_full   ? "full, not all positive"
                                                                : "has zero or missing entries");
    }
    if (rule.n > 0) {
      printf("auto format rule       %s", rule.names[0]);
      for (int k = 1; k < rule.n; ++k) printf("%s%s", k == 1 ? " (then " : ", ", rule.names[k]);
      printf("%s; row: %s\n", rule.n > 1 ? ")" : "", rule.row);
    }
  }
  if (fflush(stdout) != 0 || ferror(stdout)) /* e.g. > /dev/full: not a success */
    return cli_fail(CLI_BAD_INPUT, "info: cannot write to standard output: %s", strerror(errno));
  return CLI_OK;
}
