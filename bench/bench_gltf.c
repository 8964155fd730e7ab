/* marionette bench gltf: glTF reading, animation sampling and skinning speed, model states
 * at key times, and writing a .glb. */
#include <marionette/gltf.h>

#include <limits.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"

const char mn_bench_gltf_summary[] =
    "glTF load, sampling, skinning, model states and .glb write time";

static void usage(FILE* f) {
    fprintf(f, "usage: marionette bench gltf FILE... [--reps N]\n"
               "\n"
               "For each .gltf/.glb file: loads it N times (default 21) and samples animation 0\n"
               "(or the rest pose) at 101 times through its duration, skinning every vertex each\n"
               "time. Prints one key=value line per file: file, verts, tris, joints, anims,\n"
               "load_ms (median load), sample_us (joint world transforms), skin_us (skinning\n"
               "matrices and all vertices), vert_ns (skinning per vertex), state_us (the model\n"
               "state, mn_gltf_state, at each key time of animation 0), joint_samples_s (joints\n"
               "per second through mn_gltf_state), write_ms (median of 5 writes of animation 0\n"
               "at its key times, with the skinned mesh, to a temporary .glb, removed after),\n"
               "write_keep_ms (the same with keep_attributes: normals, texture coordinates,\n"
               "tangents, materials and their images).\n");
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
    /* model states at the key times, and writing the animation as a .glb */
    double state_us = 0, write_ms = 0, write_keep_ms = 0;
    mn_model* m = mn_gltf_model(&g, &err);
    if (m) {
        double* q = malloc(sizeof(double) * (size_t)m->nq);
        double* work = malloc(sizeof(double) * 16 * (size_t)g.njoints);
        int nk = anim >= 0 && g.anims[0].nkeys > 0 ? g.anims[0].nkeys : 1;
        for (int round = 0; round < ROUNDS; round++) {
            double t0 = mn_bench_now_ns();
            for (int k = 0; k < nk; k++)
                mn_gltf_state(&g, m, anim,
                              anim >= 0 && g.anims[0].nkeys ? g.anims[0].key_times[k] : -1,
                              k ? q : NULL, q, work, &err);
            ts[round] = (mn_bench_now_ns() - t0) / nk * 1e-3;
            sink += q[0];
        }
        state_us = mn_bench_median(ts, ROUNDS);
        mn_motion mo = {0, 0, 0, NULL};
        if (anim >= 0) mn_gltf_motion_keys(&g, m, 0, file, &mo, NULL, &err);
        const char* dir = getenv("TMPDIR");
        char path[4096];
        snprintf(path, sizeof path, "%s/marionette-bench-XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(path);
        if (fd >= 0) {
            close(fd);
            double tw[5];
            for (int r = 0; r < 5; r++) {
                double t0 = mn_bench_now_ns();
                mn_gltf_write(path, m, mo.nframes ? &mo : NULL, &g, &err);
                tw[r] = (mn_bench_now_ns() - t0) * 1e-6;
            }
            write_ms = mn_bench_median(tw, 5);
            mn_gltf_write_options o = mn_gltf_write_default();
            o.keep_attributes = 1;
            for (int r = 0; r < 5; r++) {
                double t0 = mn_bench_now_ns();
                mn_gltf_write_ex(path, m, mo.nframes ? &mo : NULL, &g, &o, &err);
                tw[r] = (mn_bench_now_ns() - t0) * 1e-6;
            }
            write_keep_ms = mn_bench_median(tw, 5);
            remove(path);
        }
        mn_motion_free(&mo);
        free(q);
        free(work);
        mn_model_destroy(m);
    }
    const char* base = strrchr(file, '/');
    printf("file=%s verts=%d tris=%d joints=%d anims=%d load_ms=%.3f sample_us=%.2f skin_us=%.2f "
           "vert_ns=%.2f "
           "state_us=%.2f joint_samples_s=%.3g write_ms=%.3f write_keep_ms=%.3f\n",
           base ? base + 1 : file, g.nverts, g.ntris, g.njoints, g.nanims, load_ms, sample_us,
           skin_us, g.nverts ? skin_us * 1e3 / g.nverts : 0.0, state_us,
           state_us > 0 ? g.njoints / (state_us * 1e-6) : 0.0, write_ms, write_keep_ms);
    (void)sink;
    free(world);
    free(skin);
    free(pos);
    mn_gltf_free(&g);
    return MN_EXIT_OK;
}

static const mn_cli_opt gltf_opts[] = {
    {"--reps", MN_CLI_INT, 0, 1, INT_MAX, .bad = "--reps needs a positive integer"},
};
const mn_cli_table mn_bench_gltf_options = {
    .cmd = "bench gltf",
    MN_CLI_OPTS(gltf_opts),
    .unknown = "unknown option '%s'",
    .missing = "unknown option '%s'",
    .max_pos = -1,
    .dash_option = 1,
};

int mn_bench_gltf(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    int reps = 21, nfiles = 0; /* the args "struct" is reps itself */
    const char** files = calloc((size_t)argc + 1, sizeof *files);
    if (!files) return MN_EXIT_INPUT;
    int bad = mn_cli_parse(&mn_bench_gltf_options, argc, argv, &reps, files, &nfiles);
    if (bad) {
        free(files);
        return bad;
    }
    int rc = nfiles ? MN_EXIT_OK : mn_cli_usage_error("bench gltf", "missing FILE");
    for (int i = 0; i < nfiles && rc == MN_EXIT_OK; i++)
        rc = bench_file(files[i], reps);
    free(files);
    return rc;
}
