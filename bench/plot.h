/* Log-log plots and power-law fits for the benchmarks that report how a cost grows
 * (`bench fit --case scaling`, `bench scale`): one SVG writer, one least-squares fit. */
#ifndef MN_BENCH_PLOT_H
#define MN_BENCH_PLOT_H

#include <stddef.h>
#include <stdio.h>

/* Least-squares slope of log y against log x over n points: the exponent k of y ~ x^k
 * (0 when the x are all equal). */
double mn_bench_fit_exponent(const double* x, const double* y, int n);

/* One curve of a plot: n points (x, y), both positive. */
typedef struct mn_plot_series {
    const char* name;
    int n;
    const double* x;
    const double* y;
} mn_plot_series;

/* Writes a log-log plot of the series (up to 8, each a coloured polyline with its points and
 * a legend entry) to path, with decade grid lines. Returns 0, or -1 when the file could not
 * be written. */
int mn_bench_loglog_svg(const char* path, const char* title, const char* xlabel, const char* ylabel,
                        const mn_plot_series* series, int nseries);

/* An SVG is written into memory (mn_bench_svg_open), then to path through the library's
 * atomic writer (mn_bench_svg_close: no symlink followed, no FIFO waited on, the old file
 * whole on failure). 0, or -1 when it cannot be written. */
typedef struct mn_bench_svg {
    char* buf;
    size_t len;
} mn_bench_svg;
FILE* mn_bench_svg_open(mn_bench_svg* svg);
int mn_bench_svg_close(FILE* fp, mn_bench_svg* svg, const char* path);

#endif
