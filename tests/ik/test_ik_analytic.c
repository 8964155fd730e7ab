/* Analytic two-bone IK (src/ik/analytic.c, law of cosines, Parent ch. 5): exact answers on
 * the pole side, shoulders of one ball or three hinges, ball elbows, a wrist for the
 * orientation, elbow limits, unreachable targets, zero-length bones, no allocation. */
#include "geo_test_models.h"

static mn_ik_options analytic_options(void) {
    mn_ik_options o = mn_ik_default();
    o.method = MN_IK_ANALYTIC;
    o.tol_pos = 1e-9;
    o.tol_rot = 1e-9;
    return o;
}

/* Shoulder (ball, or three hinges), elbow (hinge about z, or ball) one unit along x,
 * hand one unit further (FIXED, the tip). Upper arm L1 = 1, forearm L2 = 1. */
enum { SHOULDER_BALL = 0, SHOULDER_HINGES = 1 };
static mn_model* arm(int shoulder, int elbow_ball, double elbow_lo, double elbow_hi, double upper) {
    mn_spec* s = mn_spec_create("arm");
    int parent;
    if (shoulder == SHOULDER_BALL) {
        parent = geo_add(s, "shoulder", -1, MN_JOINT_BALL, mn_v3(0, 0, 0), mn_v3(1, 0, 0));
    } else {
        geo_add(s, "sz", -1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 0, 1));
        geo_add(s, "sy", 0, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 1, 0));
        parent = geo_add(s, "sx", 1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(1, 0, 0));
    }
    int e = geo_add(s, "elbow", parent, elbow_ball ? MN_JOINT_BALL : MN_JOINT_HINGE,
                    mn_v3(upper, 0, 0), mn_v3(0, 0, 1));
    if (elbow_lo < elbow_hi) {
        mn_spec_joint(s, e)->limited = 1;
        mn_spec_joint(s, e)->range[0] = elbow_lo;
        mn_spec_joint(s, e)->range[1] = elbow_hi;
    }
    geo_add(s, "hand", e, MN_JOINT_FIXED, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
    return geo_compile(s);
}

static mn_ik_problem arm_problem(const mn_model* m, mn_vec3 target, mn_vec3 pole) {
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = mn_model_find_joint(m, "hand");
    p.target_pos = target;
    p.pole = pole;
    return p;
}

/* Which side of the shoulder-target line the elbow is on, along the pole. */
static double elbow_side(const mn_model* m, mn_data* d, mn_vec3 target, mn_vec3 pole) {
    mn_fk(m, d);
    mn_vec3 B = d->xf[mn_model_find_joint(m, "elbow")].p;
    mn_vec3 u = mn_vec3_normalize(target);
    mn_vec3 side = mn_vec3_madd(pole, -mn_vec3_dot(pole, u), u);
    return mn_vec3_dot(mn_vec3_madd(B, -mn_vec3_dot(B, u), u), mn_vec3_normalize(side));
}

static void test_exact_on_pole_side(void) {
    const mn_vec3 targets[4] = {{1, 1, 0.5}, {0.2, -0.9, 1.1}, {-1.5, 0.3, 0.2}, {0.1, 0.1, 1.9}};
    const mn_vec3 poles[2] = {{0, 0, 1}, {0, -1, -1}};
    for (int sh = 0; sh < 2; sh++) {
        mn_model* m = arm(sh, 0, 0, 0, 1.0);
        mn_data* d = mn_data_create(m, 0);
        for (int t = 0; t < 4; t++)
            for (int k = 0; k < 2; k++) {
                mn_data_reset(m, d);
                if (sh == SHOULDER_HINGES) d->q[0] = 0.2, d->q[1] = 0.1; /* off the gimbal lock */
                mn_ik_problem p = arm_problem(m, targets[t], poles[k]);
                mn_ik_options o = analytic_options();
                mn_ik_result r;
                mn_status st = geo_solve(mn_ik_analytic, m, d, &p, &o, &r);
                CHECK(st == MN_OK);
                if (st != MN_OK)
                    fprintf(stderr, "shoulder %d target %d pole %d: %s\n", sh, t, k, r.message);
                CHECK(geo_pos_err(m, d, &p) <= 1e-9);
                CHECK(elbow_side(m, d, targets[t], poles[k]) > 1e-3);
                CHECK(r.iterations == 1);
            }
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
}

/* The law-of-cosines angle itself: a planar target at distance D bends the elbow by
 * pi - acos((L1^2 + L2^2 - D^2) / (2 L1 L2)). */
static void test_law_of_cosines(void) {
    mn_model* m = arm(SHOULDER_BALL, 0, 0, 0, 1.0);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = arm_problem(m, mn_v3(1.2, 0.5, 0), mn_v3(0, 1, 0));
    mn_ik_options o = analytic_options();
    mn_ik_result r;
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_OK);
    double D = mn_vec3_norm(p.target_pos);
    double bend = MN_PI - acos((1 + 1 - D * D) / 2.0);
    CHECK_NEAR(fabs(d->q[m->jnt_qadr[mn_model_find_joint(m, "elbow")]]), bend, 1e-9);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A BVH leg: ball hip, ball knee. */
static void test_ball_elbow(void) {
    mn_model* m = arm(SHOULDER_BALL, 1, 0, 0, 1.0);
    mn_data* d = mn_data_create(m, 0);
    const mn_vec3 targets[3] = {{1, 1, 0.5}, {0.3, -0.2, -0.4}, {-1.0, 1.0, 1.0}};
    for (int t = 0; t < 3; t++) {
        mn_data_reset(m, d);
        mn_ik_problem p = arm_problem(m, targets[t], mn_v3(0, 0, 1));
        mn_ik_options o = analytic_options();
        mn_ik_result r;
        CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_OK);
        CHECK(geo_pos_err(m, d, &p) <= 1e-9);
        CHECK(elbow_side(m, d, targets[t], p.pole) > 1e-3);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* The elbow's range holds: within it the right root is taken; beyond it the elbow stops
 * at the limit and the result says UNREACHABLE. */
static void test_elbow_limit(void) {
    mn_model* m = arm(SHOULDER_BALL, 0, 0.0, 1.5, 1.0);
    mn_data* d = mn_data_create(m, 0);
    int qe = m->jnt_qadr[mn_model_find_joint(m, "elbow")];
    mn_ik_options o = analytic_options();
    mn_ik_result r;
    mn_ik_problem p = arm_problem(m, mn_v3(1.2, 1.0, 0.3), mn_v3(0, 0, 1)); /* bend 1.30 */
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_OK);
    CHECK(d->q[qe] >= 0 && d->q[qe] <= 1.5);
    CHECK(geo_pos_err(m, d, &p) <= 1e-9);
    mn_data_reset(m, d);
    p = arm_problem(m, mn_v3(0.3, 0.3, 0), mn_v3(0, 0, 1)); /* needs a bend of 2.43 rad */
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(r.message[0] != 0);
    CHECK(mn_q_within_limits(m, d->q, 0));
    CHECK_NEAR(d->q[qe], 1.5, 1e-12);
    CHECK(geo_all_finite(m, d));
    /* a seed outside the range starts from its projection and ends inside */
    mn_data_reset(m, d);
    d->q[qe] = -0.7;
    p = arm_problem(m, mn_v3(1.2, 1.0, 0.3), mn_v3(0, 0, 1));
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_OK);
    CHECK(mn_q_within_limits(m, d->q, 0));
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Out of reach: the arm straight and pointing at the target; inside the inner radius of
 * unequal bones: folded; never NaN. */
static void test_unreachable_stretch(void) {
    mn_model* m = arm(SHOULDER_BALL, 0, 0, 0, 1.0);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_options o = analytic_options();
    mn_ik_result r;
    const mn_vec3 poles[2] = {{0, 0, 1}, {0, 0, 0}};
    for (int k = 0; k < 2; k++) {
        mn_data_reset(m, d); /* straight arm: the bend plane is undefined */
        mn_ik_problem p = arm_problem(m, mn_v3(3, 4, 0), poles[k]);
        CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_ERR_UNREACHABLE);
        CHECK(geo_all_finite(m, d));
        mn_fk(m, d);
        mn_vec3 e = mn_point_world(d, p.tip, p.point);
        CHECK_NEAR(e.x, 1.2, 1e-9);
        CHECK_NEAR(e.y, 1.6, 1e-9);
        CHECK_NEAR(e.z, 0.0, 1e-9);
        CHECK_NEAR(r.pos_err, 3.0, 1e-9);
    }
    mn_model_destroy(m);
    mn_data_destroy(d);
    m = arm(SHOULDER_BALL, 0, 0, 0, 2.0); /* L1 = 2, L2 = 1: inner radius 1 */
    d = mn_data_create(m, 0);
    mn_ik_problem p = arm_problem(m, mn_v3(0.2, 0.3, 0), mn_v3(0, 0, 1));
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(geo_all_finite(m, d));
    mn_fk(m, d);
    CHECK_NEAR(mn_vec3_norm(mn_point_world(d, p.tip, p.point)), 1.0, 1e-9);
    /* the target itself at the shoulder */
    mn_data_reset(m, d);
    p = arm_problem(m, mn_v3(0, 0, 0), mn_v3(0, 0, 0));
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK(geo_all_finite(m, d));
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A bone of zero length is not a two-bone limb: rejected, state untouched. */
static void test_zero_length_bone(void) {
    mn_model* m = arm(SHOULDER_BALL, 0, 0, 0, 0.0);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_options o = analytic_options();
    mn_ik_result r;
    mn_ik_problem p = arm_problem(m, mn_v3(0.5, 0.5, 0), mn_v3(0, 0, 1));
    double q0[8];
    memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_ERR_ARG);
    CHECK(strstr(r.message, "zero-length") != NULL);
    CHECK(memcmp(q0, d->q, sizeof(double) * (size_t)m->nq) == 0);
    mn_data_destroy(d);
    mn_model_destroy(m);

    mn_spec* s = mn_spec_create("nohand");
    geo_add(s, "shoulder", -1, MN_JOINT_BALL, mn_v3(0, 0, 0), mn_v3(1, 0, 0));
    geo_add(s, "elbow", 0, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
    m = geo_compile(s);
    d = mn_data_create(m, 0);
    p = mn_ik_problem_default();
    p.tip = 1; /* effector on the elbow pivot */
    p.target_pos = mn_v3(0.5, 0.5, 0);
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_ERR_ARG);
    CHECK(strstr(r.message, "zero-length") != NULL);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Shoulder, elbow and a ball wrist with the hand 0.2 past it: position and orientation
 * are met exactly. */
static void test_wrist_orientation(void) {
    mn_spec* s = mn_spec_create("arm_wrist");
    geo_add(s, "shoulder", -1, MN_JOINT_BALL, mn_v3(0, 0, 0), mn_v3(1, 0, 0));
    geo_add(s, "elbow", 0, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
    geo_add(s, "wrist", 1, MN_JOINT_BALL, mn_v3(1, 0, 0), mn_v3(1, 0, 0));
    geo_add(s, "hand", 2, MN_JOINT_FIXED, mn_v3(0.2, 0.05, 0), mn_v3(0, 0, 1));
    mn_model* m = geo_compile(s);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 3;
    p.use_orientation = 1;
    p.target_pos = mn_v3(0.9, 1.0, 0.4);
    p.target_rot = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(1, 1, 0)), 1.2);
    p.pole = mn_v3(0, 0, -1);
    mn_ik_options o = analytic_options();
    mn_ik_result r;
    mn_status st = geo_solve(mn_ik_analytic, m, d, &p, &o, &r);
    CHECK(st == MN_OK);
    if (st != MN_OK) fprintf(stderr, "wrist: %s\n", r.message);
    CHECK(geo_pos_err(m, d, &p) <= 1e-9);
    CHECK(geo_rot_err(m, d, &p) <= 1e-9);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Chains the method cannot solve say so. */
static void test_unsupported_chains(void) {
    mn_model* m = geo_planar3(0, 0); /* three pivots, but the wrist would carry the position */
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 2;
    p.point = mn_v3(1, 0, 0);
    p.target_pos = mn_v3(1, 1, 0);
    mn_ik_options o = analytic_options();
    mn_ik_result r;
    mn_status st = geo_solve(mn_ik_analytic, m, d, &p, &o, &r);
    /* the third hinge is frozen: the two-bone answer for its current pose */
    CHECK(st == MN_OK || st == MN_ERR_UNREACHABLE);
    CHECK(geo_all_finite(m, d));
    mn_data_destroy(d);
    mn_model_destroy(m);
    m = geo_spatial7(); /* seven pivots */
    d = mn_data_create(m, 0);
    p.tip = 6;
    CHECK(geo_solve(mn_ik_analytic, m, d, &p, &o, &r) == MN_ERR_UNSUPPORTED);
    CHECK(r.message[0] != 0);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_deterministic_and_no_alloc(void) {
    mn_model* m = arm(SHOULDER_HINGES, 0, 0, 0, 1.0);
    mn_data* d1 = mn_data_create(m, 0);
    mn_data* d2 = mn_data_create(m, 0);
    mn_ik_problem p = arm_problem(m, mn_v3(0.4, 1.2, -0.6), mn_v3(1, 0, 0));
    mn_ik_options o = analytic_options();
    mn_ik_result r1, r2;
    d1->q[0] = d2->q[0] = 0.3;
    long before = mn_alloc_count();
    mn_status s1 = geo_solve(mn_ik_analytic, m, d1, &p, &o, &r1);
    CHECK(mn_alloc_count() == before);
    mn_status s2 = geo_solve(mn_ik_analytic, m, d2, &p, &o, &r2);
    CHECK(s1 == MN_OK && s2 == MN_OK);
    CHECK(memcmp(d1->q, d2->q, sizeof(double) * (size_t)m->nq) == 0);
    mn_data_destroy(d1);
    mn_data_destroy(d2);
    mn_model_destroy(m);
}

static void test_extreme_targets(void) {
    geo_extreme_targets(mn_ik_analytic);
}

/* Random chains of hinges, slides and balls with random limits and targets. */
static void test_random_chains(void) {
    int solved = geo_random_robustness(mn_ik_analytic, 12345u, 40, 1);
    printf("     %d of 160 random solves met their goal\n", solved);
    CHECK(solved > 0);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_exact_on_pole_side);
    RUN(test_law_of_cosines);
    RUN(test_ball_elbow);
    RUN(test_elbow_limit);
    RUN(test_unreachable_stretch);
    RUN(test_zero_length_bone);
    RUN(test_wrist_orientation);
    RUN(test_unsupported_chains);
    RUN(test_extreme_targets);
    RUN(test_random_chains);
    RUN(test_deterministic_and_no_alloc);
    return mn_test_report();
}
