/* FABRIK (src/ik/fabrik.c, Aristidou and Lasenby 2011): reaching on a planar, a spatial
 * hinge and a ball-jointed chain, compound joints sharing a pivot, hinge ranges and ball
 * cones, unreachable targets, stiffness, determinism, no allocation. */
#include "geo_test_models.h"

static mn_ik_options fabrik_options(void) {
    mn_ik_options o = mn_ik_default();
    o.method = MN_IK_FABRIK;
    o.max_iters = 2000;
    o.tol_pos = 1e-6;
    o.tol_rot = 1e-6;
    return o;
}

static void test_planar_reach(void) {
    mn_model* m = geo_planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    const mn_vec3 targets[4] = {{1.5, 1.2, 0}, {-1.0, 0.5, 0}, {0.2, -2.5, 0}, {0.5, 0.3, 0}};
    for (int t = 0; t < 4; t++) {
        d->q[0] = 0.1, d->q[1] = 0.2, d->q[2] = 0.3;
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 2;
        p.point = mn_v3(1, 0, 0);
        p.target_pos = targets[t];
        mn_ik_options o = fabrik_options();
        mn_ik_result r;
        mn_status st = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
        CHECK(st == MN_OK);
        if (st != MN_OK) fprintf(stderr, "planar %d: %s\n", t, r.message);
        CHECK(geo_pos_err(m, d, &p) <= 1e-6);
        CHECK_NEAR(r.pos_err, geo_pos_err(m, d, &p), 1e-12);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_spatial7(void) {
    mn_model* m = geo_spatial7();
    mn_data* d = mn_data_create(m, 0);
    double qt[7] = {0.5, -0.6, 0.4, 1.1, -0.3, 0.6, -0.2};
    memcpy(d->q, qt, sizeof qt);
    mn_fk(m, d);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 6;
    p.point = mn_v3(0.2, 0, 0);
    p.target_pos = mn_point_world(d, 6, p.point);
    p.target_rot = mn_quat_from_mat3(&d->xf[6].R);
    for (int orient = 0; orient < 2; orient++) {
        for (int i = 0; i < 7; i++)
            d->q[i] = 0.2;
        p.use_orientation = orient;
        mn_ik_options o = fabrik_options();
        o.tol_pos = 1e-5;
        o.tol_rot = 1e-4;
        o.max_iters = 20000;
        mn_ik_result r;
        mn_status st = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
        CHECK(st == MN_OK);
        if (st != MN_OK) fprintf(stderr, "spatial7 orient=%d: %s\n", orient, r.message);
        CHECK(geo_pos_err(m, d, &p) <= 1e-5);
        if (orient) CHECK(geo_rot_err(m, d, &p) <= 1e-4);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Three hinges on one pivot (a BVH "Zrotation Xrotation Yrotation" joint) per limb
 * segment: FABRIK treats them as one pivot and turns them in order. */
static void test_compound_joints(void) {
    mn_spec* s = mn_spec_create("compound");
    const mn_vec3 ax[3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
    int parent = -1;
    char name[16];
    for (int seg = 0; seg < 2; seg++)
        for (int a = 0; a < 3; a++) {
            snprintf(name, sizeof name, "s%d%c", seg, "zxy"[a]);
            parent = geo_add(s, name, parent, MN_JOINT_HINGE,
                             a == 0 && seg ? mn_v3(0, -1, 0) : mn_v3(0, 0, 0), ax[a]);
        }
    int tip = geo_add(s, "end", parent, MN_JOINT_FIXED, mn_v3(0, -1, 0), mn_v3(0, 0, 1));
    mn_model* m = geo_compile(s);
    mn_data* d = mn_data_create(m, 0);
    for (int i = 0; i < 6; i++)
        d->q[i] = 0.05 * (i + 1);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = tip;
    p.target_pos = mn_v3(0.6, -1.2, 0.7);
    mn_ik_options o = fabrik_options();
    o.tol_pos = 1e-6;
    mn_ik_result r;
    CHECK(geo_solve(mn_ik_fabrik, m, d, &p, &o, &r) == MN_OK);
    CHECK(geo_pos_err(m, d, &p) <= 1e-6);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_ball_chain(void) {
    mn_model* m = geo_balls(0);
    mn_data* d = mn_data_create(m, 0);
    const mn_vec3 targets[3] = {{1.0, -1.5, 0.5}, {0.0, -0.8, -1.2}, {-2.0, 0.5, 0.3}};
    for (int t = 0; t < 3; t++) {
        mn_data_reset(m, d);
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 3;
        p.target_pos = targets[t];
        mn_ik_options o = fabrik_options();
        mn_ik_result r;
        mn_status st = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
        CHECK(st == MN_OK);
        if (st != MN_OK) fprintf(stderr, "balls %d: %s\n", t, r.message);
        CHECK(geo_pos_err(m, d, &p) <= 1e-6);
        CHECK(geo_all_finite(m, d));
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Cone limits: every ball stays in its cone and twist range; a target the cones allow is
 * still reached, one they forbid is approached as far as they let it. */
static void test_cone_limits(void) {
    mn_model* m = geo_balls(0.5);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 3;
    mn_ik_options o = fabrik_options();
    mn_ik_result r;
    /* allowed: made by forward kinematics of a pose inside the cones */
    mn_quat qs[3] = {mn_quat_axis_angle(mn_v3(1, 0, 0), 0.4),
                     mn_quat_axis_angle(mn_v3(0, 0, 1), 0.45),
                     mn_quat_axis_angle(mn_vec3_normalize(mn_v3(1, 0, 1)), 0.3)};
    for (int i = 0; i < 3; i++) {
        double* q = d->q + m->jnt_qadr[i];
        q[0] = qs[i].w, q[1] = qs[i].x, q[2] = qs[i].y, q[3] = qs[i].z;
    }
    CHECK(mn_q_within_limits(m, d->q, 0));
    mn_fk(m, d);
    p.target_pos = mn_point_world(d, 3, p.point);
    mn_data_reset(m, d);
    o.tol_pos = 1e-5;
    mn_status st = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
    CHECK(st == MN_OK);
    if (st != MN_OK) fprintf(stderr, "cones reachable: %s\n", r.message);
    CHECK(mn_q_within_limits(m, d->q, 1e-9));
    /* forbidden: straight up, behind the hip */
    mn_data_reset(m, d);
    p.target_pos = mn_v3(0, 2.0, 0);
    st = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
    CHECK(st == MN_ERR_UNREACHABLE || st == MN_ERR_NOCONVERGE);
    CHECK(mn_q_within_limits(m, d->q, 1e-9));
    CHECK(geo_all_finite(m, d));
    CHECK(r.pos_err > 1.0);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_hinge_limits(void) {
    mn_model* m = geo_planar3(-0.6, 0.6);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 2;
    p.point = mn_v3(1, 0, 0);
    mn_ik_options o = fabrik_options();
    mn_ik_result r;
    p.target_pos = mn_v3(2.5, 1.0, 0);
    mn_status s0 = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
    CHECK(s0 == MN_OK);
    if (s0 != MN_OK)
        fprintf(stderr, "hinge limits: %s q %g %g %g\n", r.message, d->q[0], d->q[1], d->q[2]);
    CHECK(mn_q_within_limits(m, d->q, 0));
    mn_data_reset(m, d);
    p.target_pos = mn_v3(-1, 0.5, 0);
    mn_status st = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
    CHECK(st == MN_ERR_UNREACHABLE || st == MN_ERR_NOCONVERGE);
    CHECK(mn_q_within_limits(m, d->q, 0));
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Out of reach: the chain stretches straight toward the target. */
static void test_unreachable_stretches(void) {
    mn_model* m = geo_planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    d->q[0] = 0.3, d->q[1] = -0.5, d->q[2] = 0.4;
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 2;
    p.point = mn_v3(1, 0, 0);
    p.target_pos = mn_v3(3, 4, 0); /* 5 away, reach 3 */
    mn_ik_options o = fabrik_options();
    mn_ik_result r;
    CHECK(geo_solve(mn_ik_fabrik, m, d, &p, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK_NEAR(r.pos_err, 2.0, 1e-6);
    mn_fk(m, d);
    mn_vec3 e = mn_point_world(d, 2, p.point);
    CHECK_NEAR(e.x, 1.8, 1e-5);
    CHECK_NEAR(e.y, 2.4, 1e-5);
    CHECK(geo_all_finite(m, d));
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Position and orientation on the ball chain: the last pivot is placed from the target
 * frame, the ankle turns the foot onto it. */
static void test_ball_chain_orientation(void) {
    mn_model* m = geo_balls(0);
    mn_data* d = mn_data_create(m, 0);
    mn_quat qs[3] = {mn_quat_axis_angle(mn_vec3_normalize(mn_v3(1, 0, 0.3)), 0.7),
                     mn_quat_axis_angle(mn_v3(1, 0, 0), -1.0),
                     mn_quat_axis_angle(mn_v3(0, 0, 1), 0.4)};
    for (int i = 0; i < 3; i++) {
        double* q = d->q + m->jnt_qadr[i];
        q[0] = qs[i].w, q[1] = qs[i].x, q[2] = qs[i].y, q[3] = qs[i].z;
    }
    mn_fk(m, d);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 3;
    p.target_pos = mn_point_world(d, 3, p.point);
    p.use_orientation = 1;
    p.target_rot = mn_quat_from_mat3(&d->xf[3].R);
    mn_data_reset(m, d);
    mn_ik_options o = fabrik_options();
    o.tol_pos = 1e-6;
    o.tol_rot = 1e-6;
    mn_ik_result r;
    mn_status st = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
    CHECK(st == MN_OK);
    if (st != MN_OK) fprintf(stderr, "balls orient: %s\n", r.message);
    CHECK(geo_pos_err(m, d, &p) <= 1e-6);
    CHECK(geo_rot_err(m, d, &p) <= 1e-6);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A stiff joint moves less: the root of the planar arm, stiffness 10. */
static void test_stiffness(void) {
    double moved[2];
    for (int stiff = 0; stiff < 2; stiff++) {
        mn_spec* s = mn_spec_create("w");
        geo_add(s, "a", -1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 0, 1));
        geo_add(s, "b", 0, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
        geo_add(s, "c", 1, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
        if (stiff) mn_spec_joint(s, 0)->stiffness = 10.0;
        mn_model* m = geo_compile(s);
        mn_data* d = mn_data_create(m, 0);
        d->q[0] = d->q[1] = d->q[2] = 0.3;
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 2;
        p.point = mn_v3(1, 0, 0);
        p.target_pos = mn_v3(-0.5, 2.0, 0);
        mn_ik_options o = fabrik_options();
        mn_ik_result r;
        CHECK(geo_solve(mn_ik_fabrik, m, d, &p, &o, &r) == MN_OK);
        moved[stiff] = fabs(d->q[0] - 0.3);
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
    CHECK(moved[1] < moved[0]);
}

static void test_deterministic_and_no_alloc(void) {
    mn_model* m = geo_balls(0.8);
    mn_data* d1 = mn_data_create(m, 0);
    mn_data* d2 = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 3;
    p.target_pos = mn_v3(0.9, -1.6, 0.6);
    mn_ik_options o = fabrik_options();
    o.max_iters = 200;
    mn_ik_result r1, r2;
    long before = mn_alloc_count();
    mn_status s1 = geo_solve(mn_ik_fabrik, m, d1, &p, &o, &r1);
    CHECK(mn_alloc_count() == before);
    mn_status s2 = geo_solve(mn_ik_fabrik, m, d2, &p, &o, &r2);
    CHECK(s1 == s2 && r1.iterations == r2.iterations);
    CHECK(memcmp(d1->q, d2->q, sizeof(double) * (size_t)m->nq) == 0);
    mn_data_destroy(d1);
    mn_data_destroy(d2);
    mn_model_destroy(m);
}

/* On a free ball chain one iteration is the textbook algorithm (Aristidou and Lasenby
 * 2011, Algorithm 1), recomputed here on positions alone. */
static void test_one_iteration_is_textbook_fabrik(void) {
    mn_model* m = geo_balls(0);
    mn_data* d = mn_data_create(m, 0);
    mn_quat q1 = mn_quat_axis_angle(mn_v3(0, 0, 1), 0.3),
            q2 = mn_quat_axis_angle(mn_v3(1, 0, 0), 0.5);
    double* qk = d->q + m->jnt_qadr[1];
    qk[0] = q1.w, qk[1] = q1.x, qk[2] = q1.y, qk[3] = q1.z;
    qk = d->q + m->jnt_qadr[2];
    qk[0] = q2.w, qk[1] = q2.x, qk[2] = q2.y, qk[3] = q2.z;
    mn_fk(m, d);
    mn_vec3 p[4] = {d->xf[0].p, d->xf[1].p, d->xf[2].p, d->xf[3].p};
    double len[3];
    for (int i = 0; i < 3; i++)
        len[i] = mn_vec3_dist(p[i + 1], p[i]);
    mn_vec3 t = mn_v3(1.2, -1.4, 0.6);
    /* stage 1: from the target in */
    mn_vec3 f[4];
    f[3] = t;
    for (int i = 2; i >= 0; i--)
        f[i] = mn_vec3_madd(f[i + 1], len[i], mn_vec3_normalize(mn_vec3_sub(p[i], f[i + 1])));
    /* stage 2: from the root out */
    mn_vec3 b[4];
    b[0] = p[0];
    for (int i = 0; i < 3; i++)
        b[i + 1] = mn_vec3_madd(b[i], len[i], mn_vec3_normalize(mn_vec3_sub(f[i + 1], b[i])));

    mn_ik_problem pr = mn_ik_problem_default();
    pr.tip = 3;
    pr.target_pos = t;
    mn_ik_options o = fabrik_options();
    o.max_iters = 1;
    o.max_step = 0;
    mn_ik_result r;
    geo_solve(mn_ik_fabrik, m, d, &pr, &o, &r);
    CHECK(r.iterations == 1);
    mn_fk(m, d);
    for (int i = 1; i < 4; i++)
        CHECK(mn_vec3_dist(d->xf[i].p, b[i]) <= 1e-12);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* The straight chain of Welman Fig. 4.2 with the target pulled inward along it. */
static void test_welman_fig42(void) {
    mn_model* m = geo_planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    const double xs[3] = {2.5, 1.5, 0.8};
    for (int t = 0; t < 3; t++) {
        mn_data_reset(m, d);
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 2;
        p.point = mn_v3(1, 0, 0);
        p.target_pos = mn_v3(xs[t], 0, 0);
        mn_ik_options o = fabrik_options();
        mn_ik_result r;
        mn_status st = geo_solve(mn_ik_fabrik, m, d, &p, &o, &r);
        CHECK(st == MN_OK);
        if (st != MN_OK) fprintf(stderr, "fig 4.2 x=%g: %s\n", xs[t], r.message);
        CHECK(geo_pos_err(m, d, &p) <= 1e-6);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_degenerate_targets(void) {
    geo_degenerate_targets(mn_ik_fabrik);
}

static void test_extreme_targets(void) {
    geo_extreme_targets(mn_ik_fabrik);
}

/* Random chains of hinges, slides and balls with random limits and targets. */
static void test_random_chains(void) {
    int solved = geo_random_robustness(mn_ik_fabrik, 12345u, 40, 0);
    printf("     %d of 160 random solves met their goal\n", solved);
    CHECK(solved > 0);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_planar_reach);
    RUN(test_spatial7);
    RUN(test_compound_joints);
    RUN(test_ball_chain);
    RUN(test_cone_limits);
    RUN(test_hinge_limits);
    RUN(test_unreachable_stretches);
    RUN(test_ball_chain_orientation);
    RUN(test_stiffness);
    RUN(test_one_iteration_is_textbook_fabrik);
    RUN(test_welman_fig42);
    RUN(test_degenerate_targets);
    RUN(test_extreme_targets);
    RUN(test_random_chains);
    RUN(test_deterministic_and_no_alloc);
    return mn_test_report();
}
