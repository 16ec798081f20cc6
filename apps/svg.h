/* apps/svg.h: two small SVG charts for `--plot`: stacked horizontal bars (the per-format
 * comparison) and line series on a log10 axis (convergence histories). Pure C, no library. */
#ifndef GS_APPS_SVG_H
#define GS_APPS_SVG_H

/** One bar: label, then two stacked parts (a drawn first). A bar with note != NULL is drawn
 *  as text only ("refused: ..."). The value label reads "a + b = a+b", then `extra` when set
 *  (e.g. the speed-ups). */
typedef struct svg_bar {
  const char *label;
  double a, b;
  const char *note;
  const char *extra;
} svg_bar_t;

/** One line series: n points (x[i], y[i]); y must be > 0 on a log axis (others are skipped). */
typedef struct svg_series {
  const char *name;
  const double *x, *y;
  int n;
} svg_series_t;

/** Horizontal bars, a and b stacked, named a_name and b_name in the legend, `unit` after the
 *  value labels. Returns 0, or -1 with the cause in gs_last_error() when the file cannot be
 *  written (nothing is left behind: the file is replaced only when complete). */
int svg_bars(const char *path, const char *title, const char *unit, const char *a_name,
             const char *b_name, const svg_bar_t *bars, int n);

/** Line chart with a log10 y axis. Returns 0, or -1 with the cause in gs_last_error(). */
int svg_lines(const char *path, const char *title, const char *xlabel, const char *ylabel,
              const svg_series_t *series, int nseries);

#endif
