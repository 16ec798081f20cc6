/* apps/svg.c: the SVG charts of `--plot` (see apps/svg.h). Fixed layout, system fonts, one
 * <polyline> per series; long histories are thinned to about 2000 points per series. Files are
 * written as the Matrix Market writer writes them (io/outfile.h: a temporary renamed into place,
 * a link's target, a device in place). */
#define _POSIX_C_SOURCE 200809L
#include "apps/svg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/outfile.h"

static const char *const palette[] = {"#4878d0", "#ee854a", "#6acc64", "#d65f5f", "#956cb4",
                                      "#8c613c", "#dc7ec0", "#797979", "#d5bb67", "#82c6e2"};
#define NPALETTE (int)(sizeof palette / sizeof palette[0])

static void text_escaped(FILE *f, const char *s)
{
  for (; s && *s; ++s) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

static void text(FILE *f, double x, double y, const char *anchor, int size, const char *s)
{
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor,
          size);
  text_escaped(f, s);
  fputs("</text>\n", f);
}

/* A step of 1, 2 or 5 times a power of ten giving about `ticks` intervals up to vmax. */
static double nice_step(double vmax, int ticks)
{
  if (!(vmax > 0.0)) return 1.0;
  double raw = vmax / ticks, p = pow(10.0, floor(log10(raw))), m = raw / p;
  return (m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0) * p;
}

/* Vertical grid lines from `top` to `base` at 0, step, ... up to xmax, labelled below the base;
 * value v sits at x = left + width * v / xmax. */
static void x_grid(FILE *f, int left, double width, int top, int base, double xmax, double step,
                   const char *stroke)
{
  char buf[64];
  for (double v = 0.0; v <= xmax * (1 + 1e-9); v += step) {
    double x = left + width * v / xmax;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", x, top,
            x, base, stroke);
    snprintf(buf, sizeof buf, "%g", v);
    text(f, x, base + 16, "middle", 11, buf);
  }
}

static FILE *open_svg(gs_outfile_t *o, const char *path, int w, int h)
{
  if (gs_outfile_open(o, path) != GS_SUCCESS) return NULL;
  FILE *f = fdopen(o->fd, "w");
  if (!f) {
    GS_ERROR(GS_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    gs_outfile_abort(o);
    return NULL;
  }
  o->fd = -1; /* the stream's now */
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w, h, w, h);
  return f;
}

static int close_svg(gs_outfile_t *o, FILE *f, const char *path)
{
  fputs("</svg>\n", f);
  const int bad = ferror(f);
  int err = bad ? errno : 0;
  if (fclose(f) != 0 && !err) err = errno;
  if (bad || err) {
    GS_ERROR(GS_ERR_IO, "%s: write failed: %s", path, err ? strerror(err) : "unknown error");
    gs_outfile_abort(o);
    return -1;
  }
  return gs_outfile_commit(o) == GS_SUCCESS ? 0 : -1;
}

int svg_bars(const char *path, const char *title, const char *unit, const char *a_name,
             const char *b_name, const svg_bar_t *bars, int n)
{
  int extra = 0; /* room on the right for the longest value label */
  for (int i = 0; i < n; ++i)
    if (!bars[i].note && bars[i].extra && (int)strlen(bars[i].extra) > extra)
      extra = (int)strlen(bars[i].extra);
  const int W = 860 + 6 * extra, left = 170, right = 150 + 6 * extra, top = 62, row = 26,
            bottom = 44;
  const int H = top + row * (n > 0 ? n : 1) + bottom;
  const double plot_w = W - left - right;
  gs_outfile_t o;
  FILE *f = open_svg(&o, path, W, H);
  if (!f) return -1;
  double vmax = 0.0;
  for (int i = 0; i < n; ++i)
    if (!bars[i].note && bars[i].a + bars[i].b > vmax) vmax = bars[i].a + bars[i].b;
  double step = nice_step(vmax, 6), xmax = step * ceil(vmax / step);
  if (!(xmax > 0.0)) xmax = 1.0;
  char buf[256];

  text(f, W / 2.0, 22, "middle", 16, title);
  /* legend */
  fprintf(f, "<rect x=\"%d\" y=\"32\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", left,
          palette[0]);
  text(f, left + 18, 43, "start", 12, a_name);
  fprintf(f, "<rect x=\"%d\" y=\"32\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", left + 180,
          palette[1]);
  text(f, left + 198, 43, "start", 12, b_name);
  /* grid and axis */
  x_grid(f, left, plot_w, top, H - bottom, xmax, step, "#dddddd");
  text(f, left + plot_w / 2, H - 8, "middle", 12, unit);
  for (int i = 0; i < n; ++i) {
    double y = top + row * i;
    text(f, left - 8, y + row * 0.65, "end", 12, bars[i].label);
    if (bars[i].note) {
      text(f, left + 6, y + row * 0.65, "start", 11, bars[i].note);
      continue;
    }
    double wa = plot_w * bars[i].a / xmax, wb = plot_w * bars[i].b / xmax;
    fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>\n", left,
            y + 4, wa, row - 8, palette[0]);
    fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>\n",
            left + wa, y + 4, wb, row - 8, palette[1]);
    snprintf(buf, sizeof buf, "%.3g + %.3g = %.3g%s%s", bars[i].a, bars[i].b,
             bars[i].a + bars[i].b, bars[i].extra ? " " : "", bars[i].extra ? bars[i].extra : "");
    text(f, left + wa + wb + 6, y + row * 0.65, "start", 11, buf);
  }
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", left, top,
          left, H - bottom);
  return close_svg(&o, f, path);
}

int svg_lines(const char *path, const char *title, const char *xlabel, const char *ylabel,
              const svg_series_t *series, int nseries)
{
  const int W = 860, H = 500, left = 78, right = 24, top = 44, bottom = 56;
  const double pw = W - left - right, ph = H - top - bottom;
  gs_outfile_t o;
  FILE *f = open_svg(&o, path, W, H);
  if (!f) return -1;
  double xmax = 1.0, lo = INFINITY, hi = -INFINITY;
  for (int s = 0; s < nseries; ++s)
    for (int i = 0; i < series[s].n; ++i) {
      double x = series[s].x[i], y = series[s].y[i];
      if (x > xmax) xmax = x;
      if (y > 0.0 && isfinite(y)) {
        lo = fmin(lo, log10(y));
        hi = fmax(hi, log10(y));
      }
    }
  if (!isfinite(lo)) lo = -1.0, hi = 0.0;
  lo = floor(lo);
  hi = ceil(hi);
  if (hi <= lo) hi = lo + 1.0;
  double step = nice_step(xmax, 8);
  xmax = step * ceil(xmax / step);
  int dstep = (hi - lo) > 12 ? 2 : 1;
  char buf[64];

  text(f, W / 2.0, 24, "middle", 16, title);
  for (double d = lo; d <= hi + 1e-9; d += dstep) {
    double y = top + ph * (hi - d) / (hi - lo);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", left, y,
            W - right, y);
    snprintf(buf, sizeof buf, "1e%d", (int)d);
    text(f, left - 6, y + 4, "end", 11, buf);
  }
  x_grid(f, left, pw, top, H - bottom, xmax, step, "#eeeeee");
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
             "stroke=\"black\"/>\n", left, top, pw, ph);
  text(f, left + pw / 2, H - 14, "middle", 12, xlabel);
  fprintf(f, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" "
             "transform=\"rotate(-90 16 %.1f)\">", top + ph / 2, top + ph / 2);
  text_escaped(f, ylabel);
  fputs("</text>\n", f);

  for (int s = 0; s < nseries; ++s) {
    const svg_series_t *S = &series[s];
    int thin = S->n > 2000 ? (S->n + 1999) / 2000 : 1;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
            palette[s % NPALETTE]);
    for (int i = 0; i < S->n; ++i) {
      if (i % thin && i != S->n - 1) continue;
      double y = S->y[i];
      if (!(y > 0.0) || !isfinite(y)) continue;
      fprintf(f, "%.1f,%.1f ", left + pw * S->x[i] / xmax, top + ph * (hi - log10(y)) / (hi - lo));
    }
    fputs("\"/>\n", f);
    /* legend, top right inside the frame */
    double ly = top + 16 + 16 * s;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
               "stroke-width=\"2\"/>\n", W - right - 170.0, ly - 4, W - right - 150.0, ly - 4,
            palette[s % NPALETTE]);
    text(f, W - right - 144.0, ly, "start", 11, S->name);
  }
  return close_svg(&o, f, path);
}
