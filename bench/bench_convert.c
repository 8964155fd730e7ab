/* marionette bench convert: converting a figure to the figure document (what `convert IN
 * OUT.json` and the editor's server do) against reading it (what `info` does), in time and
 * in bytes, on the shipped figures. */
#include <marionette/gltf.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "cli.h"

const char mn_bench_convert_summary[] =
    "figure document conversion vs reading (info): time and bytes per shipped figure";

static const char* default_files[] = {
    "stickman",
    "robots/franka_panda/panda.urdf",
    "robots/nao/nao.urdf",
    "mocap/cmu_motionbuilder/cmu_02_01_walk.bvh",
    "mocap/other_skeleton/Boxing_Toes.bvh",
    "skinned/CesiumMan.glb",
    "skinned/Fox.glb",
};

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench convert [FILE...] [--data DIR] [--reps N]\n"
            "\n"
            "For each figure file (default: the built-in stickman and six shipped figures\n"
            "under DIR, default data), from memory, N times (default 21): reads it (parse and\n"
            "compile, motion and skin included: what `marionette info` does) and converts it to\n"
            "the figure document (the same read, then the document's text). One line per\n"
            "file: file, bytes (input), out_bytes (document), size_ratio, read_ms and\n"
            "convert_ms (medians), time_ratio (convert / read), mb_s (document bytes written\n"
            "per second of the convert's writing part).\n");
}

/* Wall time in ms of this program run with args, its output to /dev/null; < 0 on failure. */
static double run_self(char* const* args) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = mn_bench_now_ns();
    pid_t pid;
    int st = -1;
    if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, NULL) == 0) waitpid(pid, &st, 0);
    double t = (mn_bench_now_ns() - t0) * 1e-6;
    posix_spawn_file_actions_destroy(&fa);
    return st == 0 ? t : -1;
}

/* The commands themselves: `marionette info FILE` and `marionette convert FILE OUT.json`
 * (the document written atomically, synced), medians of n runs each. */
static void time_commands(const char* label, const char* path, int n) {
    const char* tmp = getenv("TMPDIR");
    char out[1024];
    snprintf(out, sizeof out, "%s/mn_bench_convert_%d.json", tmp && *tmp ? tmp : "/tmp",
             (int)getpid());
    double ti[9], tc[9];
    if (n > 9) n = 9;
    for (int r = 0; r < n; r++) {
        char* info[] = {"marionette", "info", (char*)path, NULL};
        char* conv[] = {"marionette", "convert", (char*)path, out, NULL};
        ti[r] = run_self(info);
        tc[r] = run_self(conv);
        if (ti[r] < 0 || tc[r] < 0) {
            unlink(out);
            fprintf(stderr, "marionette: %s: the commands failed\n", path);
            return;
        }
    }
    unlink(out);
    double i = mn_bench_median(ti, (size_t)n), c = mn_bench_median(tc, (size_t)n);
    printf("file=%s part=commands info_ms=%.1f convert_ms=%.1f time_ratio=%.2f\n", label, i, c,
           c / i);
}

static void time_file(const char* label, const char* data, size_t len, const char* name, int reps) {
    double* tr = malloc(sizeof(double) * (size_t)reps);
    double* tc = malloc(sizeof(double) * (size_t)reps);
    size_t out_len = 0;
    int ok = tr && tc;
    for (int r = 0; ok && r < reps; r++) {
        mn_model* m = NULL;
        mn_motion mo;
        mn_gltf g;
        mn_error err;
        double t0 = mn_bench_now_ns();
        ok = mn_figure_read_skin_mem(data, len, name, &m, &mo, &g, NULL, &err) == MN_OK;
        double t1 = mn_bench_now_ns();
        if (ok) {
            mn_model_destroy(m);
            mn_motion_free(&mo);
            mn_gltf_free(&g);
        }
        char* text = NULL;
        double t2 = mn_bench_now_ns();
        ok = ok && mn_figure_doc_convert_mem(data, len, name, &text, &out_len, NULL, &err) == MN_OK;
        double t3 = mn_bench_now_ns();
        free(text);
        tr[r] = (t1 - t0) * 1e-6;
        tc[r] = (t3 - t2) * 1e-6;
        if (!ok) fprintf(stderr, "marionette: %s\n", err.message);
    }
    if (ok) {
        double r = mn_bench_median(tr, (size_t)reps), c = mn_bench_median(tc, (size_t)reps);
        printf("file=%s part=library bytes=%zu out_bytes=%zu size_ratio=%.2f read_ms=%.3f "
               "convert_ms=%.3f "
               "time_ratio=%.2f mb_s=%.1f\n",
               label, len, out_len, (double)out_len / (double)len, r, c, c / r,
               c > r ? out_len / ((c - r) * 1e3) : 0.0);
    }
    free(tr);
    free(tc);
}

/* The number formatter alone: random doubles in [-1, 1] (a quaternion's components), the
 * median of 5 passes, against the search it replaced (%.6g ... %.17g, each checked with
 * strtod) on a tenth as many. */
static void time_format(void) {
    enum { N = 200000, PASSES = 5 };
    double* v = malloc(sizeof(double) * N);
    if (!v) return;
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[i] = (double)(x >> 11) / 9007199254740992.0 * 2 - 1;
    }
    char buf[MN_DOUBLE_CHARS];
    double t[PASSES], old[PASSES];
    size_t sum = 0;
    for (int p = 0; p < PASSES; p++) {
        double t0 = mn_bench_now_ns();
        for (int i = 0; i < N; i++)
            sum += (size_t)mn_format_double(v[i], buf)[2];
        t[p] = (mn_bench_now_ns() - t0) / N;
        t0 = mn_bench_now_ns();
        for (int i = 0; i < N / 10; i++) {
            for (int prec = 6; prec <= 17; prec++) {
                snprintf(buf, sizeof buf, "%.*g", prec, v[i]);
                if (strtod(buf, NULL) == v[i]) break;
            }
            sum += (size_t)buf[2];
        }
        old[p] = (mn_bench_now_ns() - t0) / (N / 10);
    }
    printf("part=format ns_per_double=%.1f search_ns_per_double=%.1f speedup=%.0f check=%zu\n",
           mn_bench_median(t, PASSES), mn_bench_median(old, PASSES),
           mn_bench_median(old, PASSES) / mn_bench_median(t, PASSES), sum % 10);
    free(v);
}

int mn_bench_convert(int argc, char** argv) {
    const char* dir = "data";
    int reps = 21, nfiles = 0;
    const char** files = calloc((size_t)argc + 1, sizeof *files);
    if (!files) return MN_EXIT_INPUT;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            free(files);
            return MN_EXIT_OK;
        } else if (!strcmp(argv[i], "--data") && i + 1 < argc) {
            dir = argv[++i];
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1 || reps > 100000) {
                free(files);
                return mn_cli_usage_error("bench convert", "--reps must be 1..100000");
            }
        } else if (argv[i][0] == '-') {
            free(files);
            return mn_cli_usage_error("bench convert", "unknown option '%s'", argv[i]);
        } else {
            files[nfiles++] = argv[i];
        }
    }
    int own = nfiles == 0;
    size_t ndef = sizeof default_files / sizeof *default_files;
    for (size_t f = 0; f < (own ? ndef : (size_t)nfiles); f++) {
        char path[1024];
        const char* label = own ? default_files[f] : files[f];
        if (own && strcmp(label, "stickman"))
            snprintf(path, sizeof path, "%s/%s", dir, label);
        else
            snprintf(path, sizeof path, "%s", label);
        if (!strcmp(path, "stickman")) {
            const char* t = mn_stickman_text();
            time_file("stickman", t, strlen(t), "stickman.skel", reps);
            time_commands("stickman", "stickman", reps);
            continue;
        }
        char* data = NULL;
        size_t len = 0;
        mn_error err;
        if (mn_read_file(path, &data, &len, &err) != MN_OK) {
            fprintf(stderr, "marionette: %s: %s\n", path, err.message);
            continue;
        }
        const char* base = strrchr(label, '/');
        time_file(base ? base + 1 : label, data, len, path, reps);
        free(data);
        time_commands(base ? base + 1 : label, path, reps);
    }
    free(files);
    time_format();
    return MN_EXIT_OK;
}
