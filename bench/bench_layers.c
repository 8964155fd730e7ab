/* marionette bench layers: the speed of blending layered sequences (layers.h): a base and a
 * full-body layer of the stick figure, every joint sampled in both and blended at every call
 * (joint samples per second per core: joints of the blended pose per second). Reports;
 * asserts nothing about time. */
#include <marionette/anim.h>
#include <marionette/io.h>
#include <marionette/layers.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

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
               "joint_samples_per_s (moving joints of the blended pose per second).\n");
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

int mn_bench_layers(int argc, char** argv) {
    if (mn_cli_wants_help(argc, argv)) {
        usage(stdout);
        return MN_EXIT_OK;
    }
    int nsamples = 200000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
            if (!mn_cli_parse_int(argv[++i], &nsamples) || nsamples < 1)
                return mn_cli_usage_error("bench layers", "--samples needs a positive integer");
        } else {
            return mn_cli_usage_error("bench layers", "unknown argument '%s'", argv[i]);
        }
    }
    mn_error err;
    mn_model* m = mn_stickman_model(&err);
    if (!m) return mn_cli_input_error(&err);
    mn_interp rots[2] = {MN_INTERP_SLERP, MN_INTERP_SQUAD};
    for (int r = 0; r < 2; r++)
        for (int mode = 0; mode < 2; mode++)
            time_blend(m, rots[r], (mn_layer_mode)mode, nsamples);
    mn_model_destroy(m);
    return MN_EXIT_OK;
}
