/* marionette bench layers: the speed of blending layered sequences (layers.h): a base and a
 * full-body layer of the stick figure, every joint sampled in both and blended at every call
 * (joint samples per second per core: joints of the blended pose per second). Reports;
 * asserts nothing about time. */
#include <marionette/anim.h>
#include <marionette/io.h>
#include <marionette/layers.h>
#include <marionette/takes.h>

#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "options.h"

const char mn_bench_layers_summary[] =
    "layered sequences: two-layer blends of the stick figure (joint samples/s)";

static void usage(FILE* f) {
    fprintf(f, "usage: marionette bench layers [--samples N]\n"
               "\n"
               "A base sequence of the built-in stick figure (20 keys of varied poses, 10 frames\n"
               "apart) with one full-body layer (20 other keys, weight 0.5 eased in over the\n"
               "first 30 frames, no mask: every joint of both is sampled and blended), override\n"
               "then additive, under slerp and squad. One line per case: ns_per_sample (one\n"
               "blended pose, best of 5 rounds of N samples, thread CPU time) and\n"
               "joint_samples_per_s (moving joints of the blended pose per second).\n"
               "With --walk and --hop (two takes of one skeleton, CMU units: scaled by 0.0254 /\n"
               "0.45), part=crossfade (the walk's frame 650 into the hop, the phase searched in\n"
               "its frames 0-740, feet locked), part=root_motion (out and back in) and part=loop\n"
               "(of the walk); with --jumps, part=retime (half speed, flights ballistic): wall\n"
               "seconds and frames of output per second.\n");
}

static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static unsigned lcg = 12345u;
static double rnd(void) {
    lcg = lcg * 1664525u + 1013904223u;
    return (lcg >> 8) / 16777216.0;
}

/* 20 keys of random poses within the middle half of every hinge's range. */
static void random_keys(const mn_model* m, mn_seq* s) {
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < 20; k++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int j = 0; j < m->njoint; j++) {
            if (m->jnt_type[j] != MN_JOINT_HINGE) continue;
            double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
            q[m->jnt_qadr[j]] = lo + (hi - lo) * (0.25 + 0.5 * rnd());
        }
        q[0] = 0.3 * rnd(), q[1] = 0.1 * rnd(), q[2] = 0.2 * k;
        mn_quat r = mn_quat_axis_angle(mn_v3(0, 1, 0), 0.3 * rnd());
        q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
        mn_seq_set_key(s, 10 * k, q, NULL);
    }
    free(q);
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int read_take(const char* path, mn_model** m, mn_motion* mo) {
    mn_bvh_options o = mn_bvh_default();
    o.scale = 0.0254 / 0.45;
    mn_error err;
    if (mn_bvh_read(path, &o, m, mo, NULL, &err) == MN_OK) return 1;
    fprintf(stderr, "marionette: %s\n", err.message);
    return 0;
}

/* Crossfade, root motion and loop of the walk (and the hop); retiming of the jumps. */
static int time_takes(const char* walk, const char* hop, const char* jumps) {
    mn_model *ma = NULL, *mb = NULL, *mj = NULL;
    mn_motion a, b, j;
    mn_error err;
    if (walk && hop) {
        if (!read_take(walk, &ma, &a)) return MN_EXIT_INPUT;
        if (!read_take(hop, &mb, &b))
            return mn_motion_free(&a), mn_model_destroy(ma), MN_EXIT_INPUT;
        double fps = 1 / a.frame_time;
        mn_take_feet feet;
        mn_crossfade_options o = mn_crossfade_default();
        o.at = 650, o.b_max = 740;
        mn_crossfade_result r;
        double t0 = wall_s();
        int ok =
            mn_take_feet_find(ma, NULL, &feet, &err) == MN_OK &&
            mn_crossfade(ma, a.q, a.nframes, b.q, b.nframes, fps, &feet, &o, &r, &err) == MN_OK;
        double dt = wall_s() - t0;
        if (ok) {
            printf(
                "bench=layers part=crossfade frames=%d locks=%d seconds=%.3f frames_per_s=%.0f\n",
                r.nframes, r.locks, dt, r.nframes / dt);
            free(r.q);
        }
        size_t n = (size_t)a.nframes, nq = (size_t)ma->nq;
        double* track = malloc(sizeof(double) * 3 * n);
        double* ip = malloc(sizeof(double) * nq * n);
        t0 = wall_s();
        mn_take_root_extract(ma, a.q, a.nframes, mn_v3(0, 1, 0), track, ip);
        mn_take_root_apply(ma, ip, a.nframes, mn_v3(0, 1, 0), track, ip);
        dt = wall_s() - t0;
        printf("bench=layers part=root_motion frames=%d seconds=%.5f frames_per_s=%.3g\n",
               a.nframes, dt, a.nframes / dt);
        free(track), free(ip);
        mn_loop_result lr;
        t0 = wall_s();
        if (mn_take_loop(ma, a.q, a.nframes, fps, mn_v3(0, 1, 0), 0, 0, &lr, &err) == MN_OK) {
            dt = wall_s() - t0;
            printf("bench=layers part=loop frames_searched=%d cycle_frames=%d seconds=%.3f\n",
                   a.nframes, lr.end - lr.start, dt);
            free(lr.q);
        }
        mn_motion_free(&a), mn_motion_free(&b);
        mn_model_destroy(ma), mn_model_destroy(mb);
    }
    if (jumps) {
        if (!read_take(jumps, &mj, &j)) return MN_EXIT_INPUT;
        mn_take_feet feet;
        double n1 = j.nframes - 1, t[2] = {0, 2 * n1}, s[2] = {0, n1};
        mn_retime_result r;
        double t0 = wall_s();
        if (mn_take_feet_find(mj, NULL, &feet, &err) == MN_OK &&
            mn_take_retime(mj, j.q, j.nframes, 1 / j.frame_time, &feet, 2, t, s, NULL, 1, &r,
                           &err) == MN_OK) {
            double dt = wall_s() - t0;
            printf("bench=layers part=retime frames=%d flights=%d gravity=%.3f seconds=%.3f "
                   "frames_per_s=%.0f\n",
                   r.nframes, r.flights, r.gravity, dt, r.nframes / dt);
            free(r.q);
        }
        mn_motion_free(&j);
        mn_model_destroy(mj);
    }
    return MN_EXIT_OK;
}

static void time_blend(const mn_model* m, mn_interp rot, mn_layer_mode mode, int nsamples) {
    mn_seq_def def = mn_seq_def_default();
    def.rot = rot;
    def.trans = MN_INTERP_CATMULL_ROM;
    mn_seq* s = mn_seq_create(m, &def, NULL);
    random_keys(m, s);
    int li = mn_seq_add_layer(s, "layer", mode, NULL);
    random_keys(m, mn_seq_layer(s, li));
    double wf[2] = {0, 30}, wv[2] = {0, 0.5};
    mn_seq_set_layer_weights(s, li, 2, wf, wv, NULL);
    double* q = malloc(sizeof(double) * ((size_t)m->nq + (size_t)mn_seq_blend_work_size(s)));
    double* work = q + m->nq;
    double f0 = 30, span = mn_seq_end(s) - f0; /* where the layer's weight is 0.5 */
    volatile double sink = 0;
    double best = 1e300;
    for (int round = 0; round < 5; round++) {
        double t0 = cpu_ns();
        for (int i = 0; i < nsamples; i++) {
            double x = (double)i * 0.6180339887498949;
            mn_seq_sample_blend(s, f0 + span * (x - floor(x)), q, work);
            sink += q[m->nq - 1];
        }
        double dt = (cpu_ns() - t0) / nsamples;
        if (dt < best) best = dt;
    }
    int nj = 0;
    for (int j = 0; j < m->njoint; j++)
        nj += m->jnt_type[j] != MN_JOINT_FIXED;
    printf("bench=layers part=blend figure=stickman joints=%d layers=2 mode=%s weight=0.5 rot=%s "
           "trans=catmull-rom ns_per_sample=%.1f joint_samples_per_s=%.3g\n",
           nj, mn_layer_mode_name(mode), mn_interp_name(rot), best, nj / best * 1e9);
    (void)sink;
    free(q);
    mn_seq_destroy(s);
}

typedef struct layers_args {
    const char *walk, *hop, *jumps;
    int nsamples;
} layers_args;

#define AT(f, t) MN_CLI_AT(layers_args, f, t)
static const mn_cli_opt layers_opts[] = {
    {"--walk", MN_CLI_STRING, AT(walk, const char*), .bad = NULL},
    {"--hop", MN_CLI_STRING, AT(hop, const char*), .bad = NULL},
    {"--jumps", MN_CLI_STRING, AT(jumps, const char*), .bad = NULL},
    {"--samples", MN_CLI_INT, AT(nsamples, int), 1, INT_MAX,
     .bad = "--samples needs a positive integer"},
};
#undef AT
const mn_cli_table mn_bench_layers_options = {
    .cmd = "bench layers",
    MN_CLI_OPTS(layers_opts),
    .unknown = "unknown argument '%s'",
    .missing = "unknown argument '%s'",
    .dash_option = 1,
};

int mn_bench_layers(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    layers_args args = {NULL, NULL, NULL, 200000};
    int bad = mn_cli_parse(&mn_bench_layers_options, argc, argv, &args, NULL, NULL);
    if (bad) return bad;
    int nsamples = args.nsamples;
    const char *walk = args.walk, *hop = args.hop, *jumps = args.jumps;
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) return mn_cli_input_error(&err);
    mn_interp rots[2] = {MN_INTERP_SLERP, MN_INTERP_SQUAD};
    for (int r = 0; r < 2; r++)
        for (int mode = 0; mode < 2; mode++)
            time_blend(m, rots[r], (mn_layer_mode)mode, nsamples);
    mn_model_destroy(m);
    if (!walk != !hop) return mn_cli_usage_error("bench layers", "--walk and --hop go together");
    return time_takes(walk, hop, jumps);
}
