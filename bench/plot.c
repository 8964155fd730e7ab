/* Log-log SVG plots and power-law fits: see plot.h. */
#include "plot.h"

#include <marionette/io.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double mn_bench_fit_exponent(const double* x, const double* y, int n) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    double den = n * sxx - sx * sx;
    return den != 0 ? (n * sxy - sx * sy) / den : 0;
}

int mn_bench_loglog_svg(const char* path, const char* title, const char* xlabel, const char* ylabel,
                        const mn_plot_series* series, int nseries) {
    static const char* colours[8] = {"#c0392b", "#2c7fb8", "#27ae60", "#8e44ad",
                                     "#e67e22", "#16a085", "#7f8c8d", "#d35400"};
    if (nseries > 8) nseries = 8;
    double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
    for (int s = 0; s < nseries; s++)
        for (int i = 0; i < series[s].n; i++) {
            xlo = fmin(xlo, series[s].x[i]), xhi = fmax(xhi, series[s].x[i]);
            ylo = fmin(ylo, series[s].y[i]), yhi = fmax(yhi, series[s].y[i]);
        }
    if (!(xhi > 0) || !(yhi > 0)) return -1;
    mn_bench_svg svg;
    FILE* fp = mn_bench_svg_open(&svg);
    if (!fp) return -1;
    const double W = 640, H = 420, L = 70, R = 20, T = 40, B = 50;
    double x0 = floor(log10(xlo)), x1 = ceil(log10(xhi));
    double y0 = floor(log10(ylo)), y1 = ceil(log10(yhi));
    if (y1 <= y0) y1 = y0 + 1;
    if (x1 <= x0) x1 = x0 + 1;
#define SX(v) (L + (log10(v) - x0) / (x1 - x0) * (W - L - R))
#define SY(v) (H - B - (log10(v) - y0) / (y1 - y0) * (H - T - B))
    fprintf(fp,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 "
            "0 %.0f %.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
            "fill=\"white\"/>\n",
            W, H, W, H);
    fprintf(fp, "<text x=\"%.0f\" y=\"22\" font-size=\"14\">%s</text>\n", L, title);
    for (int e = (int)x0; e <= (int)x1; e++) {
        double px = SX(pow(10, e));
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", px,
                T, px, H - B);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">1e%d</text>\n", px,
                H - B + 18, e);
    }
    for (int e = (int)y0; e <= (int)y1; e++) {
        double py = SY(pow(10, e));
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L,
                py, W - R, py);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n", L - 6, py + 4,
                e);
    }
    fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (L + W - R) / 2,
            H - 12, xlabel);
    fprintf(fp,
            "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" "
            "text-anchor=\"middle\">%s</text>\n",
            (T + H - B) / 2, (T + H - B) / 2, ylabel);
    for (int c = 0; c < nseries; c++) {
        const mn_plot_series* s = &series[c];
        fprintf(fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                colours[c]);
        for (int i = 0; i < s->n; i++)
            fprintf(fp, "%.1f,%.1f ", SX(s->x[i]), SY(s->y[i]));
        fprintf(fp, "\"/>\n");
        for (int i = 0; i < s->n; i++)
            fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", SX(s->x[i]),
                    SY(s->y[i]), colours[c]);
        fprintf(fp,
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
                "stroke-width=\"2\"/>",
                L + 16, T + 14 + 18 * c, L + 40, T + 14 + 18 * c, colours[c]);
        fprintf(fp, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", L + 46, T + 18 + 18 * c, s->name);
    }
#undef SX
#undef SY
    fprintf(fp, "</svg>\n");
    return mn_bench_svg_close(fp, &svg, path);
}

FILE* mn_bench_svg_open(mn_bench_svg* svg) {
    svg->buf = NULL;
    svg->len = 0;
    return open_memstream(&svg->buf, &svg->len);
}

int mn_bench_svg_close(FILE* fp, mn_bench_svg* svg, const char* path) {
    int ok = fclose(fp) == 0;
    mn_error err;
    ok = ok && mn_write_file_atomic(path, svg->buf, svg->len, &err) == MN_OK;
    free(svg->buf);
    svg->buf = NULL;
    return ok ? 0 : -1;
}
