/* mn_ik_solve_batch: the same answers as one mn_ik_solve per target (from the seed, or
 * following the previous answer), the per-target statuses and the summary, the bad-input
 * table (nothing solved, nothing changed), and no heap allocation. */
#include <marionette/ik.h>
#include <marionette/model.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test.h"

static int add(mn_spec* s, const char* name, int parent, mn_joint_type type, mn_vec3 offset,
               mn_vec3 axis) {
    mn_joint_def d = mn_joint_default();
    d.name = name;
    d.parent = parent;
    d.type = type;
    d.offset = offset;
    d.axis = axis;
    if (type == MN_JOINT_HINGE) {
        d.limited = 1;
        d.range[0] = -2.5;
        d.range[1] = 2.5;
    }
    int i = mn_spec_add_joint(s, &d, NULL);
    CHECK(i >= 0);
    return i;
}

/* root - j1 (z) - j2 (y) - j3 (y) - j4 (x) - tip: a limited four-hinge arm of reach 3. */
static mn_model* arm(void) {
    mn_spec* s = mn_spec_create("arm");
    int r = add(s, "root", -1, MN_JOINT_FIXED, mn_v3(0, 0, 0), mn_v3(0, 0, 1));
    int j1 = add(s, "j1", r, MN_JOINT_HINGE, mn_v3(0, 0, 0.5), mn_v3(0, 0, 1));
    int j2 = add(s, "j2", j1, MN_JOINT_HINGE, mn_v3(0, 0, 1), mn_v3(0, 1, 0));
    int j3 = add(s, "j3", j2, MN_JOINT_HINGE, mn_v3(0, 0, 1), mn_v3(0, 1, 0));
    int j4 = add(s, "j4", j3, MN_JOINT_HINGE, mn_v3(0, 0, 0.5), mn_v3(1, 0, 0));
    add(s, "tip", j4, MN_JOINT_FIXED, mn_v3(0, 0, 0.5), mn_v3(0, 0, 1));
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

#define NT 12
/* Targets: reachable points (some with an orientation that the arm can meet), and one out
 * of reach (index 7). */
static void make_targets(double* t) {
    for (int k = 0; k < NT; k++) {
        double a = 0.5 * k, r = 1.2 + 0.1 * (k % 4);
        double* row = t + 7 * k;
        row[0] = r * cos(a);
        row[1] = r * sin(a);
        row[2] = 0.8 + 0.1 * (k % 3);
        row[3] = 1, row[4] = 0, row[5] = 0, row[6] = 0;
    }
    t[7 * 7 + 0] = 9; /* unreachable */
}

static void test_same_as_single_solves(void) {
    mn_model* m = arm();
    mn_data* d = mn_data_create(m, 0);
    mn_data* e = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = mn_model_find_joint(m, "tip");
    double t[7 * NT], t3[3 * NT];
    make_targets(t);
    for (int k = 0; k < NT; k++)
        memcpy(t3 + 3 * k, t + 7 * k, sizeof(double) * 3);
    mn_ik_options o = mn_ik_default();
    for (int follow = 0; follow <= 1; follow++) {
        for (int width = 3; width <= 7; width += 4) {
            mn_data_reset(m, d);
            d->q[1] = 0.3; /* the seed */
            double seed[16];
            memcpy(seed, d->q, sizeof(double) * (size_t)m->nq);
            double qo[NT * 16];
            mn_status st[NT];
            mn_ik_batch_result r;
            mn_status s =
                mn_ik_solve_batch(m, d, &p, width == 3 ? t3 : t, NT, width, follow, &o, qo, st, &r);
            CHECK(s == MN_ERR_UNREACHABLE);
            CHECK(r.status == s && r.first_unmet == 7);
            CHECK(strstr(r.message, "targets[7]") != NULL);
            CHECK(r.solved == NT - 1);
            CHECK(r.time_us >= 0);
            /* the same solves one by one */
            memcpy(e->q, seed, sizeof(double) * (size_t)m->nq);
            int iters = 0;
            double maxe = 0;
            for (int k = 0; k < NT; k++) {
                if (!follow) memcpy(e->q, seed, sizeof(double) * (size_t)m->nq);
                mn_ik_problem pk = p;
                pk.target_pos = mn_v3(t[7 * k], t[7 * k + 1], t[7 * k + 2]);
                mn_ik_result one;
                mn_status sk = mn_ik_solve(m, e, &pk, &o, &one);
                CHECK(st[k] == sk);
                CHECK(sk == (k == 7 ? MN_ERR_UNREACHABLE : MN_OK));
                CHECK(!memcmp(qo + k * m->nq, e->q, sizeof(double) * (size_t)m->nq));
                iters += one.iterations;
                if (one.pos_err > maxe) maxe = one.pos_err;
            }
            CHECK(r.iterations == iters);
            CHECK(r.max_pos_err == maxe);
            CHECK(!memcmp(d->q, e->q, sizeof(double) * (size_t)m->nq)); /* the last answer */
        }
    }
    mn_data_destroy(d);
    mn_data_destroy(e);
    mn_model_destroy(m);
}

/* With an orientation goal, the quaternions of a 7-wide row are the targets of the tip's
 * frame; NULL outputs are allowed; no allocation inside the batch. */
static void test_orientation_and_no_alloc(void) {
    mn_model* m = arm();
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = mn_model_find_joint(m, "tip");
    p.use_orientation = 1;
    /* targets the arm reaches: the poses of known states */
    double t[7 * 4];
    for (int k = 0; k < 4; k++) {
        mn_data_reset(m, d);
        for (int i = 0; i < m->nq; i++)
            d->q[i] = 0.2 * (k + 1) * (i % 2 ? -1 : 1);
        mn_fk(m, d);
        mn_xform X = d->xf[p.tip];
        mn_quat qr = mn_quat_from_mat3(&X.R);
        double row[7] = {X.p.x, X.p.y, X.p.z, qr.w, qr.x, qr.y, qr.z};
        memcpy(t + 7 * k, row, sizeof row);
    }
    mn_data_reset(m, d);
    mn_ik_batch_result r;
    long before = mn_alloc_count();
    mn_status s = mn_ik_solve_batch(m, d, &p, t, 4, 7, 0, NULL, NULL, NULL, &r);
    CHECK(mn_alloc_count() == before);
    CHECK(s == MN_OK && r.solved == 4 && r.first_unmet == -1 && r.message[0] == 0);
    CHECK(r.max_pos_err <= 1e-5 && r.max_rot_err <= 1e-5);
    /* n = 0: nothing to do */
    CHECK(mn_ik_solve_batch(m, d, &p, NULL, 0, 3, 0, NULL, NULL, NULL, &r) == MN_OK);
    CHECK(r.solved == 0 && r.first_unmet == -1);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A Panda-like arm: seven hinges about z, rest orientations quarter turns about x (the
 * chain FK program's common case), limits as the Panda's. */
static mn_model* panda_like(void) {
    static const double off[8][3] = {{0, 0, 0.333},       {0, 0, 0}, {0, -0.316, 0}, {0.0825, 0, 0},
                                     {-0.0825, 0.384, 0}, {0, 0, 0}, {0.088, 0, 0},  {0, 0, 0.107}};
    static const double rx[8] = {0, -1, 1, 1, -1, 1, 1, 0}; /* quarter turns about x */
    static const double lo[7] = {-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973};
    static const double hi[7] = {2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973};
    mn_spec* s = mn_spec_create("panda_like");
    char name[16];
    for (int i = 0; i < 8; i++) {
        mn_joint_def d = mn_joint_default();
        snprintf(name, sizeof name, "j%d", i + 1);
        d.name = name;
        d.parent = i - 1;
        d.type = i < 7 ? MN_JOINT_HINGE : MN_JOINT_FIXED;
        d.offset = mn_v3(off[i][0], off[i][1], off[i][2]);
        d.orient = mn_quat_axis_angle(mn_v3(1, 0, 0), rx[i] * 0.5 * MN_PI);
        if (i < 7) {
            d.limited = 1;
            d.range[0] = lo[i];
            d.range[1] = hi[i];
        }
        CHECK(mn_spec_add_joint(s, &d, NULL) == i);
    }
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

/* Tracking: a trajectory of poses about 1 cm and 3 degrees apart, solved in follow mode,
 * meets every target, gives bitwise the answers of one mn_ik_solve per target from the
 * previous answer, allocates nothing, and stays on its branch (no joint jumps). */
static void test_tracking_trajectory(void) {
    enum { NTRACK = 300 };
    mn_model* m = panda_like();
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    mn_data* e = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = -1;
    p.tip = 7;
    p.use_orientation = 1;
    static double t[7 * NTRACK], qo[NTRACK * 7];
    static mn_status st[NTRACK];
    const double q0[7] = {0, -0.3, 0, -2.2, 0, 2.0, 0.8};
    double step_p = 0, step_r = 0;
    mn_xform prev = mn_xform_identity();
    for (int k = 0; k < NTRACK; k++) { /* a smooth joint path and its poses */
        for (int i = 0; i < 7; i++)
            d->q[i] = q0[i] + 0.5 * sin(0.02 * k * (1 + 0.3 * i) + i);
        mn_fk(m, d);
        mn_xform X = d->xf[p.tip];
        mn_quat r = mn_quat_from_mat3(&X.R);
        double row[7] = {X.p.x, X.p.y, X.p.z, r.w, r.x, r.y, r.z};
        memcpy(t + 7 * k, row, sizeof row);
        if (k > 0) {
            step_p = fmax(step_p, mn_vec3_dist(X.p, prev.p));
            step_r = fmax(step_r, mn_vec3_norm(mn_rotation_error(&X.R, &prev.R)));
        }
        prev = X;
    }
    CHECK(step_p < 0.03 && step_r < 0.1); /* centimetres and degrees apart */
    for (int i = 0; i < 7; i++)
        d->q[i] = e->q[i] = q0[i] + 0.5 * sin(i); /* the first pose's joints */
    mn_ik_batch_result r;
    long before = mn_alloc_count();
    mn_status s = mn_ik_solve_batch(m, d, &p, t, NTRACK, 7, 1, NULL, qo, st, &r);
    CHECK(mn_alloc_count() == before);
    CHECK(s == MN_OK && r.solved == NTRACK);
    CHECK(r.max_pos_err <= 1e-5 && r.max_rot_err <= 1e-5);
    double jump = 0;
    for (int k = 0; k < NTRACK; k++) {
        mn_ik_problem pk = p;
        pk.target_pos = mn_v3(t[7 * k], t[7 * k + 1], t[7 * k + 2]);
        pk.target_rot = mn_q4(t[7 * k + 3], t[7 * k + 4], t[7 * k + 5], t[7 * k + 6]);
        CHECK(mn_ik_solve(m, e, &pk, NULL, NULL) == st[k]);
        CHECK(!memcmp(qo + 7 * k, e->q, sizeof(double) * 7));
        for (int i = 0; k > 0 && i < 7; i++)
            jump = fmax(jump, fabs(qo[7 * k + i] - qo[7 * (k - 1) + i]));
        /* the pose reached, by the whole-figure FK */
        mn_fk(m, e);
        CHECK(mn_vec3_dist(e->xf[p.tip].p, pk.target_pos) <= 1.01e-5);
    }
    CHECK(jump < 0.2);
    mn_data_destroy(d);
    mn_data_destroy(e);
    mn_model_destroy(m);
}

typedef struct bad_case {
    const char* what;
    const char* message; /* expected in the message */
    int n, width, nan_at, zero_quat, no_targets, bad_tip;
} bad_case;

static void test_bad_input(void) {
    static const bad_case cases[] = {
        {"negative n", "n: -1", -1, 3, -1, 0, 0, 0},
        {"width 4", "width: 4", 3, 4, -1, 0, 0, 0},
        {"width 0", "width: 0", 3, 0, -1, 0, 0, 0},
        {"NULL targets", "targets: NULL", 3, 3, -1, 0, 1, 0},
        {"NaN position", "targets[2]: position: not finite", 4, 7, 2 * 7 + 1, 0, 0, 0},
        {"NaN quaternion", "targets[3]: quaternion: not finite", 4, 7, 3 * 7 + 4, 0, 0, 0},
        {"zero quaternion", "targets[1]: quaternion: zero", 4, 7, -1, 1, 0, 0},
        {"tip not below base", "ik: tip", 4, 3, -1, 0, 0, 1},
    };
    mn_model* m = arm();
    mn_data* d = mn_data_create(m, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_case* c = &cases[i];
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = mn_model_find_joint(m, "tip");
        p.use_orientation = c->zero_quat;
        if (c->bad_tip) p.base = mn_model_find_joint(m, "tip"), p.tip = 1;
        double t[7 * 4];
        for (int k = 0; k < 7 * 4; k++)
            t[k] = k % 7 == 3 ? 1 : 0.5;
        if (c->nan_at >= 0) t[c->nan_at] = NAN;
        if (c->zero_quat) t[7 + 3] = t[7 + 4] = t[7 + 5] = t[7 + 6] = 0;
        mn_data_reset(m, d);
        d->q[0] = 0.25;
        double q0[16], qo[4 * 16];
        memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
        for (int k = 0; k < 4 * 16; k++)
            qo[k] = -7;
        mn_status st[4] = {99, 99, 99, 99};
        mn_ik_batch_result r;
        mn_status s = mn_ik_solve_batch(m, d, &p, c->no_targets ? NULL : t, c->n, c->width, 0, NULL,
                                        qo, st, &r);
        if (s != MN_ERR_ARG || !strstr(r.message, c->message))
            fprintf(stderr, "  case '%s': status %d, message '%s'\n", c->what, (int)s, r.message);
        CHECK(s == MN_ERR_ARG && r.status == MN_ERR_ARG);
        CHECK(strstr(r.message, c->message) != NULL);
        CHECK(r.solved == 0);
        CHECK(!memcmp(q0, d->q, sizeof(double) * (size_t)m->nq));
        for (int k = 0; k < 4 * 16; k++)
            CHECK(qo[k] == -7);
        for (int k = 0; k < 4; k++)
            CHECK(st[k] == 99);
    }
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 1;
    CHECK(mn_ik_solve_batch(NULL, d, &p, NULL, 0, 3, 0, NULL, NULL, NULL, NULL) == MN_ERR_ARG);
    CHECK(mn_ik_solve_batch(m, d, NULL, NULL, 0, 3, 0, NULL, NULL, NULL, NULL) == MN_ERR_ARG);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_same_as_single_solves);
    RUN(test_orientation_and_no_alloc);
    RUN(test_tracking_trajectory);
    RUN(test_bad_input);
    return mn_test_report();
}
