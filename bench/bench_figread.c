/* marionette bench figread: read speed of the URDF and skeleton text readers. */
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"

const char mn_bench_figread_summary[] = "URDF and skeleton text read time (and the built-in stickman)";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench figread [FILE...] [--reps N]\n"
            "\n"
            "Reads each .urdf or skeleton (.skel, .scr) file from memory N times (default 201)\n"
            "and the built-in stickman text, and prints one key=value line per input: file,\n"
            "bytes, joints, dof, read_us (median parse + compile), p90_us, mb_s.\n");
}

typedef mn_status (*reader_fn)(const char*, size_t, const char*, mn_model**, mn_warnings*,
                               mn_error*);

static int has_ext(const char* s, const char* ext) {
    size_t n = strlen(s), e = strlen(ext);
    return n >= e && !strcmp(s + n - e, ext);
}

static int bench_text(const char* label, const char* text, size_t len, reader_fn fn, int reps) {
    double* t = malloc(sizeof(double) * (size_t)reps);
    if (!t) return MN_EXIT_INPUT;
    mn_model* m = NULL;
    mn_error err;
    int njoint = 0, nv = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = mn_bench_now_ns();
        mn_status s = fn(text, len, label, &m, NULL, &err);
        t[r] = (mn_bench_now_ns() - t0) * 1e-3;
        if (s != MN_OK) {
            free(t);
            return mn_cli_input_error(&err);
        }
        njoint = m->njoint, nv = m->nv;
        mn_model_destroy(m);
    }
    double med = mn_bench_median(t, (size_t)reps), p90 = mn_bench_quantile(t, (size_t)reps, 0.9);
    const char* base = strrchr(label, '/');
    printf("file=%s bytes=%zu joints=%d dof=%d read_us=%.1f p90_us=%.1f mb_s=%.1f\n",
           base ? base + 1 : label, len, njoint, nv, med, p90, med > 0 ? len / med : 0.0);
    free(t);
    return MN_EXIT_OK;
}

int mn_bench_figread(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    int reps = 201;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (!mn_cli_parse_int(argv[++i], &reps) || reps < 1)
                return mn_cli_usage_error("bench figread", "--reps needs a positive integer");
        } else if (argv[i][0] == '-') {
            return mn_cli_usage_error("bench figread", "unknown option '%s'", argv[i]);
        }
    }
    const char* st = mn_stickman_text();
    int rc = bench_text("stickman", st, strlen(st), mn_skel_read_mem, reps);
    for (int i = 1; i < argc && rc == MN_EXIT_OK; i++) {
        if (!strcmp(argv[i], "--reps")) {
            i++;
            continue;
        }
        char* text;
        size_t len;
        mn_error err;
        if (mn_read_file(argv[i], &text, &len, &err) != MN_OK) return mn_cli_input_error(&err);
        reader_fn fn = has_ext(argv[i], ".urdf") ? mn_urdf_read_mem : mn_skel_read_mem;
        rc = bench_text(argv[i], text, len, fn, reps);
        free(text);
    }
    return rc;
}
