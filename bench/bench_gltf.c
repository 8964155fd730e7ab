/* marionette bench gltf: glTF reading, animation sampling and skinning speed. */
#include <marionette/gltf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"

const char mn_bench_gltf_summary[] = "glTF load, animation sampling and skinning time of skinned models";

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench gltf FILE... [--reps N]\n"
            "\n"
            "For each .gltf/.glb file: loads it N times (default 21) and samples animation 0\n"
            "(or the rest pose) at 101 times through its duration, skinning every vertex each\n"
            "time. Prints one key=value line per file: file, verts, tris, joints, anims,\n"
            "load_ms (median load), sample_us (joint world transforms), skin_us (skinning\n"
            "matrices and all vertices), vert_ns (skinning per vertex).\n");
}

static int bench_file(const char* file, int reps) {
    mn_error err;
    mn_gltf g;
    double* loads = malloc(sizeof(double) * (size_t)reps);
    if (!loads) return MN_EXIT_INPUT;
    for (int r = 0; r < reps; r++) {
        double t0 = mn_bench_now_ns();
        mn_status s = mn_gltf_read(file, &g, NULL, &err);
        loads[r] = (mn_bench_now_ns() - t0) * 1e-6;
        if (s != MN_OK) {
            free(loads);
            return mn_cli_input_error(&err);
        }
        if (r + 1 < reps) mn_gltf_free(&g);
    }
    double load_ms = mn_bench_median(loads, (size_t)reps);
    free(loads);
    double* world = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double* skin = malloc(sizeof(double) * 12 * (size_t)g.njoints);
    double* pos = malloc(sizeof(double) * 3 * (size_t)g.nverts + 1);
    int anim = g.nanims > 0 ? 0 : -1;
    double dur = anim >= 0 ? g.anims[0].duration : 0;
    enum { NT = 101, ROUNDS = 15 };
    double ts[ROUNDS], tk[ROUNDS];
    volatile double sink = 0;
    for (int round = 0; round < ROUNDS; round++) {
        double a = 0, b = 0;
        for (int k = 0; k < NT; k++) {
            double t0 = mn_bench_now_ns();
            mn_gltf_sample(&g, anim, dur * k / (NT - 1), world);
            double t1 = mn_bench_now_ns();
            mn_gltf_skin_matrices(&g, world, skin);
            mn_gltf_skin_vertices(&g, skin, pos);
            double t2 = mn_bench_now_ns();
            a += t1 - t0;
            b += t2 - t1;
            sink += pos[0];
        }
        ts[round] = a / NT * 1e-3;
        tk[round] = b / NT * 1e-3;
    }
    double sample_us = mn_bench_median(ts, ROUNDS), skin_us = mn_bench_median(tk, ROUNDS);
    const char* base = strrchr(file, '/');
    printf("file=%s verts=%d tris=%d joints=%d anims=%d load_ms=%.3f sample_us=%.2f skin_us=%.2f vert_ns=%.2f\n",
           base ? base + 1 : file, g.nverts, g.ntris, g.njoints, g.nanims, load_ms, sample_us, skin_us,
           g.nverts ? skin_us * 1e3 / g.nverts : 0.0);
    (void)sink;
    free(world);
    free(skin);
    free(pos);
    mn_gltf_free(&g);
    return MN_EXIT_OK;
}

int mn_bench_gltf(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    int reps = 21, nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (!mn_cli_parse_int(argv[++i], &reps) || reps < 1)
                return mn_cli_usage_error("bench gltf", "--reps needs a positive integer");
        } else if (argv[i][0] == '-') {
            return mn_cli_usage_error("bench gltf", "unknown option '%s'", argv[i]);
        } else {
            nfiles++;
        }
    }
    if (!nfiles) return mn_cli_usage_error("bench gltf", "missing FILE");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps")) {
            i++;
            continue;
        }
        int rc = bench_file(argv[i], reps);
        if (rc != MN_EXIT_OK) return rc;
    }
    return MN_EXIT_OK;
}
