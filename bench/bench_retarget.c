/* marionette bench retarget: frames per second of retargeting a take onto a figure, with the
 * IK clean-up, the mapping alone and a naive copy of joint angles, and the skate figures of
 * each in the same run. Reports; asserts nothing about time. */
#include <marionette/io.h>
#include <marionette/retarget.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cli.h"

const char mn_bench_retarget_summary[] =
    "retarget the CMU walk onto the stick figure: frames per second with the clean-up, skate";

#define DEFAULT_FILE "data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"

static void usage(FILE* f) {
    fprintf(f,
            "usage: marionette bench retarget [FILE] [--to TARGET] [--reps N]\n"
            "\n"
            "Retargets the take FILE (default " DEFAULT_FILE ", relative\n"
            "to the current folder: run from the source tree) onto TARGET (default stickman),\n"
            "N times (default 15) for each of: the clean-up (mapping plus Lagrange solve with the\n"
            "feet pinned in contact and the hands dragged), the mapping alone, and a naive copy\n"
            "of joint angles. Each run includes the take's analysis (contacts, targets). One\n"
            "line per variant:\n"
            "  variant, frames, fps (median over the runs, wall clock), cpu_fps (thread CPU\n"
            "  time), us_per_frame, skate_max_mm, skate_mean_mm, foot_err_max_mm,\n"
            "  hand_err_max_mm, limit_violations, unconverged_frames.\n");
}

static double thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int mn_bench_retarget(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    const char *file = DEFAULT_FILE, *to = "stickman";
    int reps = 15, have_file = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--to") && i + 1 < argc)
            to = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (!mn_cli_parse_int(argv[++i], &reps) || reps < 1)
                return mn_cli_usage_error("bench retarget", "--reps needs a positive integer");
        } else if (argv[i][0] == '-')
            return mn_cli_usage_error("bench retarget", "unknown option '%s'", argv[i]);
        else if (!have_file) {
            file = argv[i];
            have_file = 1;
        } else
            return mn_cli_usage_error("bench retarget", "one FILE only");
    }
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
    int rc = MN_EXIT_OK;
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
        double w = mn_bench_median(wall, (size_t)reps), c = mn_bench_median(cpu, (size_t)reps);
        printf("variant=%s frames=%d fps=%.0f cpu_fps=%.0f us_per_frame=%.2f skate_max_mm=%.3f "
               "skate_mean_mm=%.3f foot_err_max_mm=%.3f hand_err_max_mm=%.3f "
               "limit_violations=%ld unconverged_frames=%d\n",
               names[v], mo.nframes, mo.nframes / (w * 1e-9), mo.nframes / (c * 1e-9),
               w * 1e-3 / mo.nframes, m.skate_max_mm, m.skate_mean_mm, m.foot_err_max_mm,
               m.hand_err_max_mm, m.limit_violations, unmet);
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
