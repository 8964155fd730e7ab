/* Sampling and blending give the poses they gave before their arithmetic was batched
 * (sample_kernels.h: several rotation units at a time, fdlibm's arctangent, a Taylor step for
 * the renormalisations): tests/data/blend_samples.txt holds poses written by the sampling of
 * before, and every number sampled now lies within 1e-12 of it. The cases are the layer
 * benchmark's (the stick figure, 20 random keys, a full-body layer at weight 0.5, slerp and
 * squad, override and additive), two layers with a mask that differs along the compound
 * joints and a time warp, and the CMU skeleton's ball joints under squad; the frames are
 * random ones, the keys and frames a hair beside them. Sampling allocates nothing.
 *
 * The file was written by this program built with -DMN_BLEND_SAMPLES_WRITE against the
 * sampling of before (no test support linked): blend_samples_write OUT.txt. */
#include <marionette/anim.h>
#include <marionette/io.h>
#include <marionette/layers.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MN_BLEND_SAMPLES_WRITE
#include "test.h"
#endif

#define NCASE 6
#define NFRAME 12

static unsigned lcg;
static double rnd(void) {
    lcg = lcg * 1664525u + 1013904223u;
    return (lcg >> 8) / 16777216.0;
}

/* 20 keys 10 frames apart: hinges within the middle part of their range (spread 0.5: the
 * benchmark's middle half), balls turned by up to 2.5 spread rad about random axes, the root
 * placed and turned about y. */
static void random_keys(const mn_model* m, mn_seq* s, double spread) {
    double* keys = malloc(sizeof(double) * 20 * (size_t)m->nq);
    double frames[20];
    for (int k = 0; k < 20; k++) {
        double* q = keys + (size_t)k * (size_t)m->nq;
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int j = 0; j < m->njoint; j++) {
            int t = m->jnt_type[j], a = m->jnt_qadr[j];
            if (t == MN_JOINT_HINGE) {
                double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
                if (!m->jnt_limited[j]) lo = -1, hi = 1;
                q[a] = lo + (hi - lo) * (0.5 + spread * (rnd() - 0.5));
            } else if (t == MN_JOINT_BALL) {
                mn_vec3 ax = mn_vec3_normalize(mn_v3(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5));
                mn_quat r = mn_quat_axis_angle(ax, 2.5 * spread * rnd());
                q[a] = r.w, q[a + 1] = r.x, q[a + 2] = r.y, q[a + 3] = r.z;
            }
        }
        q[0] = 0.3 * rnd(), q[1] = 0.1 * rnd(), q[2] = 0.2 * k;
        mn_quat r = mn_quat_axis_angle(mn_v3(0, 1, 0), 0.3 * rnd());
        q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
        frames[k] = 10 * k;
    }
    mn_seq_add_keys(s, 20, frames, keys, NULL, NULL, NULL); /* the tables built once */
    free(keys);
}

/* Case c's sequence: 0-3 the benchmark's (slerp/squad x override/additive), 4 two layers on
 * wide poses (a non-uniform mask, a time warp), 5 the CMU skeleton under squad, additive. */
static mn_seq* make_case(const mn_model* m, int c) {
    lcg = 12345u + 977u * (unsigned)c;
    mn_seq_def def = mn_seq_def_default();
    def.rot = c == 0 || c == 2 ? MN_INTERP_SLERP : MN_INTERP_SQUAD;
    if (c == 4 || c == 5) def.rot = MN_INTERP_SQUAD;
    def.trans = MN_INTERP_CATMULL_ROM;
    mn_seq* s = mn_seq_create(m, &def, NULL);
    if (!s) return NULL;
    double spread = c == 4 ? 0.95 : 0.5;
    random_keys(m, s, spread);
    mn_layer_mode mode = c < 2 || c == 4 ? MN_LAYER_OVERRIDE : MN_LAYER_ADDITIVE;
    int li = mn_seq_add_layer(s, "layer", mode, NULL);
    random_keys(m, mn_seq_layer(s, li), spread);
    double wf[2] = {0, 30}, wv[2] = {0, 0.5};
    mn_seq_set_layer_weights(s, li, 2, wf, wv, NULL);
    if (c == 4) {
        double* mask = malloc(sizeof(double) * (size_t)m->njoint);
        for (int j = 0; j < m->njoint; j++)
            mask[j] = (j % 3) * 0.5;
        mn_seq_set_layer_mask(s, li, mask, NULL);
        free(mask);
        int l2 = mn_seq_add_layer(s, "second", MN_LAYER_ADDITIVE, NULL);
        random_keys(m, mn_seq_layer(s, l2), spread);
        double t[3] = {0, 60, 200}, src[3] = {0, 30, 190}, f2[3] = {0, 50, 190},
               w2[3] = {0.2, 1, 0.7};
        mn_seq_set_warp(mn_seq_layer(s, l2), 3, t, src, NULL, NULL);
        mn_seq_set_layer_weights(s, l2, 3, f2, w2, NULL);
    }
    return s;
}

/* Frame i of a case: random ones over the keys and a little beyond, keys, and frames 1e-9
 * beside keys. */
static double frame_at(int i) {
    if (i < 8) {
        double x = (i + 1) * 0.6180339887498949;
        return -2 + 194 * (x - floor(x));
    }
    if (i < 10) return 10.0 * (7 * (i - 8) + 2);
    return 10.0 * (7 * (i - 10) + 4) + (i % 2 ? 1e-9 : -1e-9);
}

/* The two models: the stick figure, and the CMU walk's skeleton. */
static mn_model* model_of(int c, const char* bvh) {
    if (c < 5) return mn_stickman_model(NULL);
    mn_bvh_options o = mn_bvh_default();
    mn_model* m = NULL;
    mn_motion mo;
    if (mn_bvh_read(bvh, &o, &m, &mo, NULL, NULL) != MN_OK) return NULL;
    mn_motion_free(&mo);
    return m;
}

#ifdef MN_BLEND_SAMPLES_WRITE
int main(int argc, char** argv) {
    if (argc < 3) return 2;
    FILE* f = fopen(argv[1], "w");
    if (!f) return 1;
    fprintf(f, "# case frame blended[nq] base[nq]: poses sampled by mn_seq_sample_blend and "
               "mn_seq_sample (tests/anim/test_blend_samples.c)\n");
    for (int c = 0; c < NCASE; c++) {
        mn_model* m = model_of(c, argv[2]);
        mn_seq* s = make_case(m, c);
        double* q = malloc(sizeof(double) * ((size_t)m->nq + (size_t)mn_seq_blend_work_size(s)));
        for (int i = 0; i < NFRAME; i++) {
            double fr = frame_at(i);
            fprintf(f, "%d %.17g", c, fr);
            mn_seq_sample_blend(s, fr, q, q + m->nq);
            for (int k = 0; k < m->nq; k++)
                fprintf(f, " %.17g", q[k]);
            mn_seq_sample(s, fr, q);
            for (int k = 0; k < m->nq; k++)
                fprintf(f, " %.17g", q[k]);
            fprintf(f, "\n");
        }
        free(q);
        mn_seq_destroy(s);
        mn_model_destroy(m);
    }
    return fclose(f) != 0;
}
#else
static void test_same_as_before(void) {
    FILE* f = fopen(MN_TEST_DATA "/blend_samples.txt", "r");
    CHECK(f != NULL);
    if (!f) return;
    char line[256];
    CHECK(fgets(line, sizeof line, f) != NULL); /* the header */
    double worst = 0;
    long numbers = 0, bad = 0;
    for (int c = 0; c < NCASE; c++) {
        mn_model* m = model_of(c, MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh");
        CHECK(m != NULL);
        if (!m) break;
        mn_seq* s = make_case(m, c);
        CHECK(s != NULL);
        size_t nq = (size_t)m->nq;
        double* q = malloc(sizeof(double) * (2 * nq + (size_t)mn_seq_blend_work_size(s)));
        double *qb = q + nq, *work = qb + nq;
        for (int i = 0; i < NFRAME; i++) {
            int fc;
            double fr;
            CHECK(fscanf(f, "%d %lf", &fc, &fr) == 2 && fc == c && fr == frame_at(i));
            long before = mn_alloc_count();
            CHECK(mn_seq_sample_blend(s, fr, q, work) == MN_OK);
            CHECK(mn_seq_sample(s, fr, qb) == MN_OK);
            CHECK(mn_alloc_count() == before);
            for (int pass = 0; pass < 2; pass++) {
                const double* got = pass ? qb : q;
                for (size_t k = 0; k < nq; k++) {
                    double w;
                    CHECK(fscanf(f, "%lf", &w) == 1);
                    double d = fabs(got[k] - w);
                    if (!(d <= 1e-12)) bad++;
                    if (d > worst) worst = d;
                    numbers++;
                }
            }
        }
        free(q);
        mn_seq_destroy(s);
        mn_model_destroy(m);
    }
    fclose(f);
    CHECK(numbers > 0 && bad == 0);
    printf("     %ld numbers sampled, at most %.3g from the sampling of before\n", numbers, worst);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_same_as_before);
    return mn_test_report();
}
#endif
