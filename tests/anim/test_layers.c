/* Layers and time warps (layers.h): the blend of every joint type against formulas written
 * out here (lerp, slerp along the shorter arc, the rest-relative delta of an additive layer),
 * weight curves and masks, the shipped layered document baked with its feet locked on the
 * blended result, a document round trip, the time warp's monotone curve and a retimed bake
 * that keeps the locks, and sampling with layers without a heap allocation. */
#include <marionette/io.h>
#include <marionette/layers.h>
#include <marionette/sequence.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "toy_model.h"

static void put_quat(double* q, mn_quat r) {
    q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
}
static mn_quat get_quat(const double* q) {
    return mn_q4(q[0], q[1], q[2], q[3]);
}
/* The rotation angle between two unit quaternions (sign-blind; from the relative rotation's
 * vector part, accurate near zero). */
static double qdist(mn_quat a, mn_quat b) {
    mn_quat d = mn_quat_mul(mn_quat_conj(a), b);
    return 2 * atan2(sqrt(d.x * d.x + d.y * d.y + d.z * d.z), fabs(d.w));
}

/* Override and additive blends of each joint type against the formulas. */
static void test_blend_formulas(void) {
    mn_model* m = toy();
    double base[13], lay[13], q[13];
    mn_vec3 ax1 = mn_vec3_normalize(mn_v3(1, 2, 0.5)), ax2 = mn_vec3_normalize(mn_v3(-1, 0.3, 1));
    base[0] = 1, base[1] = 2, base[2] = 3;
    put_quat(base + 3, mn_quat_axis_angle(ax1, 0.4));
    put_quat(base + 7, mn_quat_axis_angle(ax2, 1.1));
    base[11] = 0.3, base[12] = 0.1;
    lay[0] = -1, lay[1] = 0, lay[2] = 5;
    /* the layer's root rotation on the far hemisphere: the blend must take the shorter arc */
    mn_quat lr = mn_quat_axis_angle(ax2, 1.0);
    put_quat(lay + 3, mn_q4(-lr.w, -lr.x, -lr.y, -lr.z));
    put_quat(lay + 7, mn_quat_axis_angle(ax1, -0.7));
    lay[11] = -0.5, lay[12] = 0.4;

    double a = 0.3;
    memcpy(q, base, sizeof q);
    mn_pose_blend(m, q, lay, a, NULL, MN_LAYER_OVERRIDE);
    CHECK_NEAR(q[0], 1 + a * (-1 - 1), 1e-15);
    CHECK_NEAR(q[2], 3 + a * (5 - 3), 1e-15);
    CHECK_NEAR(q[11], 0.3 + a * (-0.5 - 0.3), 1e-15);
    CHECK_NEAR(q[12], 0.1 + a * (0.4 - 0.1), 1e-15);
    /* slerp along the shorter arc: the rotation a of the way from base to layer, by the
     * relative rotation's axis and angle */
    mn_quat b0 = get_quat(base + 3);
    mn_quat rel = mn_quat_mul(mn_quat_conj(b0), lr);
    if (rel.w < 0) rel = mn_q4(-rel.w, -rel.x, -rel.y, -rel.z);
    double ang = 2 * acos(rel.w);
    mn_vec3 rax = mn_vec3_normalize(mn_v3(rel.x, rel.y, rel.z));
    mn_quat want = mn_quat_mul(b0, mn_quat_axis_angle(rax, a * ang));
    CHECK(qdist(get_quat(q + 3), want) < 1e-12);
    CHECK_NEAR(mn_quat_norm(get_quat(q + 3)), 1, 1e-15);
    CHECK_NEAR(mn_quat_norm(get_quat(q + 7)), 1, 1e-15);

    /* additive: the layer's difference from the rest (identity rotations, zero positions and
     * angles for the toy), scaled by a */
    memcpy(q, base, sizeof q);
    mn_pose_blend(m, q, lay, a, NULL, MN_LAYER_ADDITIVE);
    CHECK_NEAR(q[0], 1 + a * (-1), 1e-15);
    CHECK_NEAR(q[11], 0.3 + a * (-0.5), 1e-15);
    /* ball: base * (rest^-1 layer)^a = base * rotation about ax1 by a * (-0.7) */
    want = mn_quat_mul(get_quat(base + 7), mn_quat_axis_angle(ax1, -0.7 * a));
    CHECK(qdist(get_quat(q + 7), want) < 1e-12);
    /* the root's delta on the far hemisphere: the shorter arc, angle 1.0 not 2 pi - 1.0 */
    want = mn_quat_mul(get_quat(base + 3), mn_quat_axis_angle(ax2, 1.0 * a));
    CHECK(qdist(get_quat(q + 3), want) < 1e-12);

    /* a mask: joints at 0 untouched, a joint at 0.5 takes half the factor */
    double mask[4] = {0, 0, 0.5, 1};
    memcpy(q, base, sizeof q);
    mn_pose_blend(m, q, lay, 0.8, mask, MN_LAYER_OVERRIDE);
    CHECK(!memcmp(q, base, 11 * sizeof(double)));
    CHECK_NEAR(q[11], 0.3 + 0.4 * (-0.8), 1e-15);
    CHECK_NEAR(q[12], 0.1 + 0.8 * 0.3, 1e-15);
    /* weight 1, full override: the layer exactly (hemisphere as the layer has it) */
    memcpy(q, base, sizeof q);
    mn_pose_blend(m, q, lay, 1, NULL, MN_LAYER_OVERRIDE);
    CHECK(!memcmp(q, lay, sizeof q));
    mn_model_destroy(m);
}

/* Weight curves ease between keys; a sequence with layers samples their blend. */
static void test_weights_and_sample(void) {
    mn_model* m = toy();
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    double q[13], k0[13], k1[13];
    memcpy(k0, m->q0, sizeof k0);
    memcpy(k1, m->q0, sizeof k1);
    k1[11] = 1.0;
    mn_seq_set_key(s, 0, k0, NULL);
    mn_seq_set_key(s, 20, k0, NULL);
    mn_error err;
    CHECK(mn_seq_add_layer(s, "up", MN_LAYER_ADDITIVE, &err) == 0);
    mn_seq* l = mn_seq_layer(s, 0);
    mn_seq_set_key(l, 0, k1, NULL);
    double wf[2] = {0, 10}, wv[2] = {0, 1};
    CHECK(mn_seq_set_layer_weights(s, 0, 2, wf, wv, &err) == MN_OK);
    double* work = malloc(sizeof(double) * (size_t)mn_seq_blend_work_size(s));
    CHECK(mn_seq_blend_work_size(s) >= m->nq);
    for (double f = 0; f <= 20; f += 2.5) {
        double u = f / 10 > 1 ? 1 : f / 10;
        CHECK(mn_seq_sample_blend(s, f, q, work) == MN_OK);
        CHECK_NEAR(q[11], u * u * (3 - 2 * u), 1e-14);
        CHECK_NEAR(mn_seq_layer_weight(s, 0, f), u * u * (3 - 2 * u), 1e-15);
    }
    /* refused: a weight out of [0, 1], frames out of order, a layer of a layer, a bad mask */
    double bw[2] = {0, 1.5}, bf[2] = {3, 3};
    CHECK(mn_seq_set_layer_weights(s, 0, 2, wf, bw, &err) == MN_ERR_ARG &&
          !strcmp(err.field, "weights"));
    CHECK(mn_seq_set_layer_weights(s, 0, 2, bf, wv, &err) == MN_ERR_ARG);
    CHECK(mn_seq_add_layer(l, "x", MN_LAYER_OVERRIDE, &err) < 0);
    double bm[4] = {0, 1, 2, 0};
    CHECK(mn_seq_set_layer_mask(s, 0, bm, &err) == MN_ERR_ARG && !strcmp(err.field, "mask"));
    CHECK(mn_seq_sample_blend(s, 5, q, NULL) == MN_ERR_ARG);
    /* a clone carries its layers */
    mn_seq* c = mn_seq_clone(s);
    double q2[13];
    CHECK(c && mn_seq_layer_count(c) == 1);
    mn_seq_sample_blend(s, 7, q, work);
    mn_seq_sample_blend(c, 7, q2, work);
    CHECK(!memcmp(q, q2, sizeof q));
    CHECK(mn_seq_remove_layer(s, 0) == MN_OK && mn_seq_layer_count(s) == 0);
    free(work);
    mn_seq_destroy(c);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static mn_seq* read_layered(mn_model** m) {
    mn_seq_read_options o = mn_seq_read_default();
    o.trusted = 1;
    mn_seq* s = NULL;
    mn_error err;
    if (mn_seq_read(MN_SOURCE "/docs/examples/layered_sequence.json", &o, m, &s, NULL, &err) !=
        MN_OK)
        fprintf(stderr, "%s\n", err.message);
    return s;
}

/* The shipped layered document: three layers over a crouch, both feet locked. Baked, the
 * feet stay where they stood at frame 0 though the bob layer moves the pelvis (the plain blend
 * moves them by centimetres), and the wave layer is in the result. */
static void test_layered_document(void) {
    mn_model* m = NULL;
    mn_seq* s = read_layered(&m);
    CHECK(s && mn_seq_layer_count(s) == 3);
    if (!s) return;
    int lf = mn_model_find_joint(m, "left foot"), el = mn_model_find_joint(m, "right elbow");
    mn_seq_bake_options bo = mn_seq_bake_default();
    mn_motion lock, plain;
    mn_seq_bake_result r;
    mn_error err;
    CHECK(mn_seq_bake(s, m, &bo, &lock, &r, &err) == MN_OK);
    bo.plain = 1;
    CHECK(mn_seq_bake(s, m, &bo, &plain, NULL, &err) == MN_OK);
    CHECK(r.unmet == 0 && r.max_violation < 1e-4);
    mn_data* d = mn_data_create(m, 0);
    mn_vec3 p0 = {0, 0, 0};
    double worst_lock = 0, worst_plain = 0, base_el = 0, blended_el = 0;
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    for (int f = 0; f < lock.nframes; f++) {
        memcpy(d->q, lock.q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        if (f == 0) p0 = d->xf[lf].p;
        double e = mn_vec3_norm(mn_vec3_sub(d->xf[lf].p, p0));
        if (e > worst_lock) worst_lock = e;
        memcpy(d->q, plain.q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        e = mn_vec3_norm(mn_vec3_sub(d->xf[lf].p, p0));
        if (e > worst_plain) worst_plain = e;
        if (f == 30) {
            mn_seq_sample(s, 30, q);
            base_el = q[m->jnt_qadr[el]];
            blended_el = plain.q[(size_t)f * (size_t)m->nq + (size_t)m->jnt_qadr[el]];
        }
    }
    printf("layered document: left foot within %.2e m of its lock (plain blend: %.4f m); right "
           "elbow at frame 30 %.3f blended, %.3f in the base\n",
           worst_lock, worst_plain, blended_el, base_el);
    CHECK(worst_lock < 1e-4);
    CHECK(worst_plain > 0.01);
    /* the wave (additive, weight 1 at frame 30): the elbow bent by the layer's -1.2 less the
     * rest angle over the base */
    CHECK_NEAR(blended_el, base_el + (-1.2 - m->q0[m->jnt_qadr[el]]), 1e-9);
    free(q);
    mn_data_destroy(d);
    mn_motion_free(&lock);
    mn_motion_free(&plain);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* Written and read back, a layered document samples bit for bit the same. */
static void test_round_trip(void) {
    mn_model* m = NULL;
    mn_seq* s = read_layered(&m);
    if (!s) return;
    double t[3] = {0, 30, 90}, src[3] = {0, 10, 60};
    CHECK(mn_seq_set_warp(mn_seq_layer(s, 1), 3, t, src, NULL, NULL) == MN_OK);
    double t2[2] = {0, 120}, s2[2] = {0, 60}, sp[2] = {0, 0};
    CHECK(mn_seq_set_warp(s, 2, t2, s2, sp, NULL) == MN_OK);
    char* text = NULL;
    size_t len = 0;
    mn_error err;
    CHECK(mn_seq_write_mem(s, "stickman", 0, &text, &len, &err) == MN_OK);
    mn_model* m2 = NULL;
    mn_seq* r = NULL;
    CHECK(mn_seq_read_mem(text, len, "rt.json", NULL, NULL, NULL, &m2, &r, NULL, &err) == MN_OK);
    free(text);
    if (!r) {
        fprintf(stderr, "%s\n", err.message);
    } else {
        double *a =
                   malloc(sizeof(double) * ((size_t)m->nq * 2 + (size_t)mn_seq_blend_work_size(r))),
               *b = a + m->nq, *w = b + m->nq;
        int same = mn_seq_layer_count(r) == 3 && mn_seq_warp_count(r) == 2;
        for (double f = -2; f < 125; f += 0.75) {
            mn_seq_sample_blend(s, mn_seq_warp(s, f), a, w);
            mn_seq_sample_blend(r, mn_seq_warp(r, f), b, w);
            same &= !memcmp(a, b, sizeof(double) * (size_t)m->nq);
        }
        CHECK(same);
        free(a);
    }
    mn_seq_destroy(r);
    mn_model_destroy(m2);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* The time warp: through its keys, monotone (PCHIP) where the keys hold and speed up, ease in
 * and out with speeds 0, speed 1 outside, and refused when it would run backwards. */
static void test_time_warp(void) {
    mn_model* m = toy();
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    double t[5] = {0, 10, 20, 30, 40}, src[5] = {0, 10, 10, 40, 45};
    mn_error err;
    CHECK(mn_seq_set_warp(s, 5, t, src, NULL, &err) == MN_OK);
    double prev = -1e9;
    int mono = 1;
    for (double x = -5; x <= 45; x += 0.01) {
        double v = mn_seq_warp(s, x);
        mono &= v >= prev - 1e-12;
        prev = v;
        if (x > 10 && x < 20) CHECK_NEAR(v, 10, 1e-12); /* the hold */
    }
    CHECK(mono);
    for (int k = 0; k < 5; k++)
        CHECK_NEAR(mn_seq_warp(s, t[k]), src[k], 1e-12);
    CHECK_NEAR(mn_seq_warp(s, 50), 55, 1e-12);
    /* ease in and out: speed 0 at both ends, a smoothstep from 0 to 60 over 0..90 */
    double t2[2] = {0, 90}, s2[2] = {0, 60}, sp[2] = {0, 0};
    CHECK(mn_seq_set_warp(s, 2, t2, s2, sp, &err) == MN_OK);
    for (double x = 0; x <= 90; x += 7.5) {
        double u = x / 90;
        CHECK_NEAR(mn_seq_warp(s, x), 60 * u * u * (3 - 2 * u), 1e-12);
    }
    /* refused */
    double back[2] = {0, -1}, fast[2] = {0, 7};
    CHECK(mn_seq_set_warp(s, 2, t2, back, NULL, &err) == MN_ERR_ARG &&
          !strcmp(err.field, "time_warp"));
    CHECK(mn_seq_set_warp(s, 2, t2, s2, fast, &err) == MN_ERR_ARG); /* 7 > 3 x 2/3 */
    double hold[2] = {5, 5}, hs[2] = {1, 0};
    CHECK(mn_seq_set_warp(s, 2, t2, hold, hs, &err) == MN_ERR_ARG);
    CHECK(mn_seq_warp_count(s) == 2); /* unchanged */
    CHECK(mn_seq_set_warp(s, 0, NULL, NULL, NULL, &err) == MN_OK && mn_seq_warp_count(s) == 0);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* A retimed bake (ease in, hold, speed up) of the layered document keeps the feet locked. */
static void test_retimed_bake_keeps_locks(void) {
    mn_model* m = NULL;
    mn_seq* s = read_layered(&m);
    if (!s) return;
    double t[4] = {0, 20, 35, 55}, src[4] = {0, 15, 15, 60}, sp[4] = {0, NAN, 0, NAN};
    mn_error err;
    CHECK(mn_seq_set_warp(s, 4, t, src, sp, &err) == MN_OK);
    mn_seq_bake_options bo = mn_seq_bake_default();
    mn_motion mo;
    mn_seq_bake_result r;
    CHECK(mn_seq_bake(s, m, &bo, &mo, &r, &err) == MN_OK);
    CHECK(mo.nframes == 56 && r.unmet == 0);
    int lf = mn_model_find_joint(m, "left foot");
    mn_data* d = mn_data_create(m, 0);
    mn_vec3 p0 = {0, 0, 0};
    double worst = 0;
    for (int f = 0; f < mo.nframes; f++) {
        memcpy(d->q, mo.q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        if (f == 0) p0 = d->xf[lf].p;
        double e = mn_vec3_norm(mn_vec3_sub(d->xf[lf].p, p0));
        if (e > worst) worst = e;
    }
    /* the hold: frames 20..35 are one pose */
    double diff = 0;
    for (int i = 0; i < m->nq; i++)
        diff += fabs(mo.q[20 * (size_t)m->nq + (size_t)i] - mo.q[35 * (size_t)m->nq + (size_t)i]);
    printf("retimed bake: %d frames, left foot within %.2e m of its lock, hold difference %.2e\n",
           mo.nframes, worst, diff);
    CHECK(worst < 1e-4);
    CHECK(diff < 1e-4);
    mn_data_destroy(d);
    mn_motion_free(&mo);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* The rotation of joint j relative to joint p's frame, by forward kinematics. */
static mn_quat relative_rot(const mn_model* m, mn_data* d, const double* q, int p, int j) {
    memcpy(d->q, q, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    mn_quat a = mn_quat_from_mat3(&d->xf[p].R), b = mn_quat_from_mat3(&d->xf[j].R);
    return mn_quat_normalize(mn_quat_mul(mn_quat_conj(a), b));
}

/* A compound joint of the stick figure (the right shoulder, three hinges) blends as one
 * rotation: at weight 0.4 the override's shoulder is the base's rotation turned 0.4 of the way
 * to the layer's along the shorter arc, and the additive's is the base's composed with 0.4 of
 * the layer's rotation from the rest, both measured by forward kinematics. */
static void test_compound_joint_as_rotation(void) {
    mn_model* m = mn_stickman_model(NULL);
    int j1 = mn_model_find_joint(m, "right arm.1"), j3 = mn_model_find_joint(m, "right arm");
    int parent = m->jnt_parent[j1];
    double *qb = malloc(sizeof(double) * (size_t)m->nq * 4), *ql = qb + m->nq, *q = ql + m->nq;
    memcpy(qb, m->q0, sizeof(double) * (size_t)m->nq);
    memcpy(ql, m->q0, sizeof(double) * (size_t)m->nq);
    qb[m->jnt_qadr[j1]] = -0.9, qb[m->jnt_qadr[j1 + 1]] = 0.4, qb[m->jnt_qadr[j3]] = 0.3;
    ql[m->jnt_qadr[j1]] = -0.2, ql[m->jnt_qadr[j1 + 1]] = -1.1, ql[m->jnt_qadr[j3]] = -0.6;
    mn_data* d = mn_data_create(m, 0);
    mn_quat Rb = relative_rot(m, d, qb, parent, j3), Rl = relative_rot(m, d, ql, parent, j3);
    mn_quat R0 = relative_rot(m, d, m->q0, parent, j3);
    for (int mode = 0; mode < 2; mode++) {
        mn_seq_def def = mn_seq_def_default(); /* slerp: the shoulder is one rotation */
        mn_seq* s = mn_seq_create(m, &def, NULL);
        mn_seq_set_key(s, 0, qb, NULL);
        mn_seq_set_key(s, 10, qb, NULL);
        int li = mn_seq_add_layer(s, "l", (mn_layer_mode)mode, NULL);
        mn_seq_set_key(mn_seq_layer(s, li), 0, ql, NULL);
        mn_seq_set_key(mn_seq_layer(s, li), 10, ql, NULL);
        double wf[1] = {0}, wv[1] = {0.4};
        mn_seq_set_layer_weights(s, li, 1, wf, wv, NULL);
        double* work = malloc(sizeof(double) * (size_t)mn_seq_blend_work_size(s));
        CHECK(mn_seq_sample_blend(s, 5, q, work) == MN_OK);
        mn_quat got = relative_rot(m, d, q, parent, j3);
        /* the expected rotation, by axis and angle */
        mn_quat delta = mode == MN_LAYER_OVERRIDE ? mn_quat_mul(mn_quat_conj(Rb), Rl)
                                                  : mn_quat_mul(mn_quat_conj(R0), Rl);
        if (delta.w < 0) delta = mn_q4(-delta.w, -delta.x, -delta.y, -delta.z);
        double ang = 2 * acos(fmin(1, delta.w));
        mn_vec3 ax = mn_vec3_normalize(mn_v3(delta.x, delta.y, delta.z));
        mn_quat want = mn_quat_mul(Rb, mn_quat_axis_angle(ax, 0.4 * ang));
        printf("compound joint (%s): off the rotation's blend by %.2e rad\n",
               mode ? "additive" : "override", qdist(got, want));
        CHECK(qdist(got, want) < 1e-9);
        free(work);
        mn_seq_destroy(s);
    }
    mn_data_destroy(d);
    free(qb);
    mn_model_destroy(m);
}

/* Sampling a layered sequence allocates nothing. */
static void test_no_allocation(void) {
    mn_model* m = NULL;
    mn_seq* s = read_layered(&m);
    if (!s) return;
    double* q = malloc(sizeof(double) * ((size_t)m->nq + (size_t)mn_seq_blend_work_size(s)));
    double* w = q + m->nq;
    const mn_seq* cs = s;
    long before = mn_alloc_count();
    double acc = 0;
    for (double f = -3; f < 65; f += 0.1) {
        mn_seq_sample_blend(cs, f, q, w);
        acc += q[3];
    }
    CHECK(mn_alloc_count() == before);
    CHECK(isfinite(acc));
    free(q);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_blend_formulas);
    RUN(test_weights_and_sample);
    RUN(test_compound_joint_as_rotation);
    RUN(test_layered_document);
    RUN(test_round_trip);
    RUN(test_time_warp);
    RUN(test_retimed_bake_keeps_locks);
    RUN(test_no_allocation);
    return mn_test_report();
}
