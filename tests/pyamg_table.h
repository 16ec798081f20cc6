/* tests/pyamg_table.h: PyAMG's reference rows (tests/data/pyamg_iterations.tsv, written by
 * tests/pyamg_iterations.py) for the AMG suites: a row's iterations and rows per level, and the
 * comparison of rows per level. Included by test_amg_host.c and test_amg_solve.c. */
#ifndef GS_TESTS_PYAMG_TABLE_H
#define GS_TESTS_PYAMG_TABLE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

/* Rows per level ("20000,2283,138") alike: all of them at theta = 0, where the pattern alone
 * decides the aggregates; the first two otherwise (deeper levels' strength depends on values,
 * so on the rho estimates: ours 15 power steps, PyAMG's Lanczos, a few per cent apart). */
static inline int rows_match(const char *ours, const char *ref, double theta)
{
  if (theta == 0.0) return strcmp(ours, ref) == 0;
  const char *a = strchr(ours, ','), *b = strchr(ref, ',');
  if (!a || !b) return strcmp(ours, ref) == 0;
  const char *a2 = strchr(a + 1, ','), *b2 = strchr(b + 1, ',');
  const size_t la = a2 ? (size_t)(a2 - ours) : strlen(ours);
  const size_t lb = b2 ? (size_t)(b2 - ref) : strlen(ref);
  return la == lb && strncmp(ours, ref, la) == 0;
}

/* PyAMG's row (matrix, method, smoother, theta, rhs mod7): its iterations (-1 when the table
 * lacks it), *conv, and (when rows is not NULL) its rows per level ("5000,594"). */
static inline int pyamg_lookup(const char *matrix, const char *method, const char *smoother,
                               double theta, int *conv, char *rows, size_t rowsz)
{
  FILE *f = fopen(gs_test_data("pyamg_iterations.tsv"), "r");
  if (!f) return -1;
  char line[4096];
  enum { M, ME, SM, TH, IT, CV, RPL, RHS, NCOL };
  static const char *const names[NCOL] = {"matrix",     "method",    "smoother",
                                          "theta",      "iterations", "converged",
                                          "rows_per_level", "rhs"};
  int col[NCOL], header = 0, it = -1;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    char *save = NULL, *tok[32];
    int nt = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *t = strtok_r(line, "\t", &save); t && nt < 32; t = strtok_r(NULL, "\t", &save))
      tok[nt++] = t;
    if (!header) {
      for (int c = 0; c < NCOL; ++c) {
        col[c] = -1;
        for (int k = 0; k < nt; ++k)
          if (!strcmp(tok[k], names[c])) col[c] = k;
        if (col[c] < 0) goto done;
      }
      header = 1;
      continue;
    }
    int ok = 1;
    for (int c = 0; c < NCOL; ++c) ok = ok && col[c] < nt;
    if (ok && !strcmp(tok[col[M]], matrix) && !strcmp(tok[col[ME]], method) &&
        !strcmp(tok[col[SM]], smoother) && !strcmp(tok[col[RHS]], "mod7") &&
        fabs(atof(tok[col[TH]]) - theta) < 1e-12) {
      it = atoi(tok[col[IT]]);
      *conv = atoi(tok[col[CV]]);
      if (rows) snprintf(rows, rowsz, "%s", tok[col[RPL]]);
      break;
    }
  }
done:
  fclose(f);
  return it;
}

/* PyAMG's cg / jacobi / mod7 row of `matrix` at theta (pyamg_lookup). */
static inline int pyamg_row(const char *matrix, double theta, int *conv, char *rows,
                            size_t rowsz)
{
  return pyamg_lookup(matrix, "cg", "jacobi", theta, conv, rows, rowsz);
}

#endif
