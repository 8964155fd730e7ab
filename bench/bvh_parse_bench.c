/* BVH parsing throughput: median of several in-memory parses of one file. */
#include "bvh_parse_bench.h"

#include <marionette/io.h>

#include <stdlib.h>
#include <time.h>

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

double mn_bench_bvh_parse_mb_s(const char* path) {
    char* text = NULL;
    size_t len = 0;
    if (mn_read_file(path, &text, &len, NULL) != MN_OK) return -1;
    enum { MAX_RUNS = 41 };
    double times[MAX_RUNS];
    int runs = 0;
    double start = now_seconds();
    /* At least 5 parses, then more until about half a second has gone by. */
    while (runs < MAX_RUNS && (runs < 5 || now_seconds() - start < 0.5)) {
        mn_model* m = NULL;
        mn_motion mo;
        double t0 = now_seconds();
        mn_status st = mn_bvh_read_mem(text, len, path, NULL, &m, &mo, NULL, NULL);
        double t1 = now_seconds();
        if (st != MN_OK) {
            free(text);
            return -1;
        }
        mn_motion_free(&mo);
        mn_model_destroy(m);
        times[runs++] = t1 - t0;
    }
    free(text);
    qsort(times, (size_t)runs, sizeof times[0], cmp_double);
    double median = times[runs / 2];
    return median > 0 ? (double)len / 1e6 / median : -1;
}
