/* marionette bench retarget: frames per second of retargeting takes onto figures, with the
 * IK clean-up, the mapping alone and a naive copy of joint angles, and the skate figures of
 * each in the same run (held contacts and every planted interval). Reports; asserts nothing
 * about time. */
#include <marionette/io.h>
#include <marionette/retarget.h>

#include <limits.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cli.h"
#include "options.h"

const char mn_bench_retarget_summary[] =
    "retarget every shipped CMU take onto the stick figure, CesiumMan and the Fox: frames per "
    "second with the clean-up, skate over every planted interval";

static const char* const default_files[] = {
    "data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh",
    "data/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh",
    "data/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh",
    "data/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh"};
static const char* const default_targets[] = {"stickman", "data/skinned/CesiumMan.glb",
                                              "data/skinned/Fox.glb"};
#define MAX_LIST 32

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench retarget [FILE...] [--to TARGET]... [--reps N]\n"
            "\n"
            "Retargets each take FILE (default: the four CMU takes of data/mocap, relative to\n"
            "the current folder: run from the source tree) onto each TARGET (default: stickman,\n"
            "data/skinned/CesiumMan.glb, data/skinned/Fox.glb), N times (default 5) for each\n"
            "of: the clean-up (mapping plus Lagrange solve with the feet held and rolled in\n"
            "contact and the hands dragged), the mapping alone, and a naive copy of joint\n"
            "angles. Each run includes the take's analysis (contacts, targets). One line per\n"
            "take, target and variant:\n"
            "  take, target, variant, frames, fps (median over the runs, wall clock), cpu_fps\n"
            "  (thread CPU time), us_per_frame, skate_max_mm (held ankles), planted,\n"
            "  planted_still, planted_skate_max_mm and planted_source_mm (the worst still\n"
            "  planted interval: target and source slide), leg (the target's leg length, in\n"
            "  its unit: the mm figures are thousandths of it), foot_err_max_mm,\n"
            "  hand_err_max_mm, limit_violations, unconverged_frames.\n");
}

static double thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static const char* base_name(const char* path) {
    const char* s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One take onto one target, the three variants. */
static int bench_pair(const char* file, const char* to, int reps) {
    mn_error err;
    mn_model *S = NULL, *T = NULL;
    mn_motion mo = {0};
    if (mn_figure_read(file, &S, &mo, NULL, &err) != MN_OK) return mn_cli_input_error(&err);
    if (mn_figure_read(to, &T, NULL, NULL, &err) != MN_OK || mo.nframes < 1) {
        if (mo.nframes < 1) mn_error_set(&err, MN_ERR_ARG, file, 0, "motion", "no motion");
        mn_motion_free(&mo);
        mn_model_destroy(S);
        mn_model_destroy(T);
        return mn_cli_input_error(&err);
    }
    double* q = malloc(sizeof(double) * (size_t)mo.nframes * (size_t)T->nq);
    double* wall = malloc(sizeof(double) * (size_t)reps);
    double* cpu = malloc(sizeof(double) * (size_t)reps);
    static const char* names[3] = {"cleanup", "mapped", "naive"};
    int rc = q && wall && cpu ? MN_EXIT_OK : MN_EXIT_INPUT;
    for (int v = 0; v < 3 && rc == MN_EXIT_OK; v++) {
        mn_retarget_options o = mn_retarget_options_default();
        o.cleanup = v == 0;
        mn_retarget_mode mode = v == 2 ? MN_RETARGET_NAIVE : MN_RETARGET_MAPPED;
        mn_retarget* rt = mn_retarget_create(S, T, NULL, &o, &err);
        if (!rt) {
            rc = mn_cli_input_error(&err);
            break;
        }
        int unmet = 0;
        for (int r = 0; r < reps; r++) {
            double t0 = mn_bench_now_ns(), c0 = thread_cpu_ns();
            mn_retarget_set_take(rt, mo.q, mo.nframes, mo.frame_time, &err);
            unmet = 0;
            for (int f = 0; f < mo.nframes; f++)
                if (mn_retarget_frame(rt, f, mode, q + (size_t)f * T->nq) != MN_OK) unmet++;
            wall[r] = mn_bench_now_ns() - t0;
            cpu[r] = thread_cpu_ns() - c0;
        }
        mn_retarget_metrics m;
        mn_retarget_measure(rt, q, mo.nframes, &m);
        mn_retarget_info info;
        mn_retarget_get_info(rt, &info);
        double w = mn_bench_median(wall, (size_t)reps), c = mn_bench_median(cpu, (size_t)reps);
        printf("take=%s target=%s variant=%s frames=%d fps=%.0f cpu_fps=%.0f us_per_frame=%.2f "
               "skate_max_mm=%.3f planted=%d planted_still=%d planted_skate_max_mm=%.3f "
               "planted_source_mm=%.3f leg=%.4g foot_err_max_mm=%.3f hand_err_max_mm=%.3f "
               "limit_violations=%ld unconverged_frames=%d\n",
               base_name(file), base_name(to), names[v], mo.nframes, mo.nframes / (w * 1e-9),
               mo.nframes / (c * 1e-9), w * 1e-3 / mo.nframes, m.skate_max_mm, m.planted,
               m.planted_still, m.planted_skate_max_mm, m.planted_source_mm, info.leg_target,
               m.foot_err_max_mm, m.hand_err_max_mm, m.limit_violations, unmet);
        mn_retarget_destroy(rt);
    }
    free(q);
    free(wall);
    free(cpu);
    mn_motion_free(&mo);
    mn_model_destroy(S);
    mn_model_destroy(T);
    return rc;
}

typedef struct retarget_args {
    const char* target_v[MAX_LIST];
    mn_cli_list targets;
    int reps;
} retarget_args;

static const mn_cli_opt retarget_opts[] = {
    {"--to", MN_CLI_LIST, MN_CLI_AT(retarget_args, targets, mn_cli_list),
     .bad = "at most " MN_CLI_STR(MAX_LIST) " targets"},
    {"--reps", MN_CLI_INT, MN_CLI_AT(retarget_args, reps, int), 1, INT_MAX,
     .bad = "--reps needs a positive integer"},
};
const mn_cli_table mn_bench_retarget_options = {
    .cmd = "bench retarget",
    MN_CLI_OPTS(retarget_opts),
    .unknown = "unknown option '%s'",
    .missing = "unknown option '%s'",
    .max_pos = MAX_LIST,
    .too_many = "at most " MN_CLI_STR(MAX_LIST) " files",
    .dash_option = 1,
};

int mn_bench_retarget(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    retarget_args args;
    args.targets = (mn_cli_list){args.target_v, 0, MAX_LIST};
    args.reps = 5;
    const char* files[MAX_LIST];
    int nfiles = 0;
    int bad = mn_cli_parse(&mn_bench_retarget_options, argc, argv, &args, files, &nfiles);
    if (bad) return bad;
    const char** targets = args.targets.v;
    int ntargets = args.targets.n, reps = args.reps;
    if (!nfiles)
        for (size_t i = 0; i < sizeof default_files / sizeof default_files[0]; i++)
            files[nfiles++] = default_files[i];
    if (!ntargets)
        for (size_t i = 0; i < sizeof default_targets / sizeof default_targets[0]; i++)
            targets[ntargets++] = default_targets[i];
    for (int i = 0; i < nfiles; i++)
        for (int j = 0; j < ntargets; j++) {
            int rc = bench_pair(files[i], targets[j], reps);
            if (rc != MN_EXIT_OK) return rc;
        }
    return MN_EXIT_OK;
}
