/* Cyclic coordinate descent (src/ik/ccd.c, Welman 4.2): the closed-form joint steps
 * checked numerically, reaching on a planar, a spatial and a ball-jointed chain, limits,
 * stiffness weights, the singular case of Welman Fig. 4.2, determinism, no allocation. */
#include <stdlib.h>

#include "geo_test_models.h"
#include "ik/geo_common.h"

static mn_ik_options ccd_options(void) {
    mn_ik_options o = mn_ik_default();
    o.method = MN_IK_CCD;
    o.max_iters = 5000;
    o.tol_pos = 1e-6;
    o.tol_rot = 1e-6;
    return o;
}

/* Welman's objective for one joint: w_p P_id . P_ic + w_o sum_j u_jd . u_jc, eq. 4.16-4.18,
 * evaluated from the frames after forward kinematics. */
static double welman_g(const mn_model* m, mn_data* d, int pivot, int tip, mn_vec3 point, mn_vec3 pd,
                       const mn_mat3* Rd, double wp, double wo) {
    mn_fk(m, d);
    mn_vec3 o = d->xf[pivot].p;
    mn_vec3 pc = mn_point_world(d, tip, point);
    double g = wp * mn_vec3_dot(mn_vec3_sub(pd, o), mn_vec3_sub(pc, o));
    for (int c = 0; c < 3; c++)
        g += wo * mn_vec3_dot(mn_mat3_col(Rd, c), mn_mat3_col(&d->xf[tip].R, c));
    return g;
}

/* The hinge step phi = atan2(k3, k2 - k1) (eq. 4.19-4.23, reconstructed from the OCR) is
 * the maximum of the objective: a finite-difference derivative vanishes there, the
 * second difference is negative, and a grid over [-pi, pi] finds nothing better. */
static void test_hinge_step_is_the_maximum(void) {
    mn_model* m = geo_spatial7();
    mn_data* d = mn_data_create(m, 0);
    double q0[7] = {0.3, -0.4, 0.5, 0.9, -0.2, 0.7, 0.1};
    mn_vec3 point = mn_v3(0.2, 0.1, 0);
    mn_vec3 pd = mn_v3(0.4, 0.9, -0.3);
    mn_mat3 Rd = mn_mat3_axis_angle(mn_vec3_normalize(mn_v3(1, 2, 3)), 0.8);
    for (int k = 0; k < 7; k++) {
        memcpy(d->q, q0, sizeof q0);
        mn_fk(m, d);
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 6;
        p.point = point;
        p.target_pos = pd;
        p.use_orientation = 1;
        p.target_rot = mn_quat_from_mat3(&Rd);
        mn_ik_options o = ccd_options();
        o.respect_limits = 0;
        o.max_step = 0;
        size_t mark = mn_arena_mark(&d->arena);
        mn_geo_chain c;
        CHECK(mn_geo_chain_build(m, d, &p, &o, &c) == MN_OK);
        mn_geo_goal g;
        g.npt = 1;
        g.pc[0] = mn_point_world(d, 6, point);
        g.pd[0] = pd;
        g.wpt[0] = 0.7;
        g.use_rot = 1;
        g.Rc = d->xf[6].R;
        g.Rd = Rd;
        g.wo = 0.4;
        mn_geo_step(&c, d, k, &g, 0);
        mn_arena_reset(&d->arena, mark);
        double qs = d->q[k];
        double g0 = welman_g(m, d, k, 6, point, pd, &Rd, 0.7, 0.4);
        const double h = 1e-4;
        d->q[k] = qs + h;
        double gp = welman_g(m, d, k, 6, point, pd, &Rd, 0.7, 0.4);
        d->q[k] = qs - h;
        double gm = welman_g(m, d, k, 6, point, pd, &Rd, 0.7, 0.4);
        CHECK_NEAR((gp - gm) / (2 * h), 0.0, 1e-7);
        CHECK(gp + gm - 2 * g0 <= 1e-12);
        for (int i = -180; i <= 180; i++) {
            d->q[k] = q0[k] + i * MN_PI / 180;
            CHECK(welman_g(m, d, k, 6, point, pd, &Rd, 0.7, 0.4) <= g0 + 1e-12);
        }
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Horn's quaternion alignment recovers a known rotation from noisy-free pairs. */
static void test_best_rotation(void) {
    mn_quat R = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(-1, 0.5, 2)), 2.5);
    mn_vec3 a[4] = {{1, 0, 0}, {0, 2, 0}, {0.3, -0.2, 1}, {1, 1, 1}}, b[4];
    double w[4] = {1, 0.5, 2, 0.1};
    for (int i = 0; i < 4; i++)
        b[i] = mn_quat_rotate(R, a[i]);
    mn_quat q = mn_geo_best_rotation(a, b, w, 4);
    CHECK(mn_quat_angle_between(q, R) < 1e-9);
    /* half a turn, the case a shortest arc must not break on */
    mn_quat s = mn_geo_shortest_arc(mn_v3(1, 0, 0), mn_v3(-2, 0, 0));
    mn_vec3 r = mn_quat_rotate(s, mn_v3(1, 0, 0));
    CHECK_NEAR(r.x, -1, 1e-12);
}

/* The ball-limit projection agrees with the model's own limit test. */
static void test_ball_clamp_matches_model(void) {
    mn_model* m = geo_balls(0.5);
    mn_data* d = mn_data_create(m, 0);
    unsigned seed = 7;
    for (int t = 0; t < 200; t++) {
        mn_vec3 v;
        seed = seed * 1103515245u + 12345u;
        v.x = (double)(seed >> 8) / (1 << 24) - 0.5;
        seed = seed * 1103515245u + 12345u;
        v.y = (double)(seed >> 8) / (1 << 24) - 0.5;
        seed = seed * 1103515245u + 12345u;
        v.z = (double)(seed >> 8) / (1 << 24) - 0.5;
        mn_quat q = mn_quat_exp(mn_vec3_scale(v, 5.0));
        mn_quat c =
            mn_ball_clamp(q, m->jnt_axis[0], m->jnt_swing[0], m->jnt_twist[0], m->jnt_twist[1]);
        d->q[0] = c.w, d->q[1] = c.x, d->q[2] = c.y, d->q[3] = c.z;
        CHECK(mn_q_within_limits(m, d->q, 1e-9));
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_planar_reach(void) {
    mn_model* m = geo_planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    const mn_vec3 targets[3] = {{1.5, 1.2, 0}, {-1.0, 0.5, 0}, {0.2, -2.5, 0}};
    for (int t = 0; t < 3; t++) {
        d->q[0] = 0.1, d->q[1] = 0.2, d->q[2] = 0.3;
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 2;
        p.point = mn_v3(1, 0, 0);
        p.target_pos = targets[t];
        mn_ik_options o = ccd_options();
        mn_ik_result r;
        CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_OK);
        CHECK(r.pos_err <= 1e-6);
        CHECK(geo_pos_err(m, d, &p) <= 1e-6);
        CHECK(r.iterations > 0);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Targets made by forward kinematics of a known pose are reachable, in position and in
 * position and orientation. */
static void test_spatial7_position_and_orientation(void) {
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
        mn_ik_options o = ccd_options();
        o.tol_pos = 1e-5;
        o.tol_rot = 1e-4;
        o.max_iters = 20000;
        mn_ik_result r;
        mn_status st = geo_solve(mn_ik_ccd, m, d, &p, &o, &r);
        CHECK(st == MN_OK);
        CHECK(geo_pos_err(m, d, &p) <= 1e-5);
        if (orient) CHECK(geo_rot_err(m, d, &p) <= 1e-4);
        if (st != MN_OK) fprintf(stderr, "spatial7 orient=%d: %s\n", orient, r.message);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_ball_chain(void) {
    mn_model* m = geo_balls(0);
    mn_data* d = mn_data_create(m, 0);
    /* a pose to aim at */
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
    p.target_rot = mn_quat_from_mat3(&d->xf[3].R);
    for (int orient = 0; orient < 2; orient++) {
        mn_data_reset(m, d);
        p.use_orientation = orient;
        mn_ik_options o = ccd_options();
        o.tol_pos = 1e-6;
        o.tol_rot = 1e-6;
        mn_ik_result r;
        CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_OK);
        CHECK(geo_pos_err(m, d, &p) <= 1e-6);
        if (orient) CHECK(geo_rot_err(m, d, &p) <= 1e-6);
        for (int i = 0; i < 3; i++) {
            const double* q = d->q + m->jnt_qadr[i];
            CHECK_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-12);
        }
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Hinge ranges and ball cones hold at every solve's end, reachable or not. */
static void test_limits(void) {
    mn_model* m = geo_planar3(-0.6, 0.6);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 2;
    p.point = mn_v3(1, 0, 0);
    mn_ik_options o = ccd_options();
    mn_ik_result r;
    p.target_pos = mn_v3(2.5, 1.0, 0); /* reachable within the ranges */
    CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_OK);
    CHECK(mn_q_within_limits(m, d->q, 0));
    mn_data_reset(m, d);
    p.target_pos = mn_v3(-1, 0.5, 0); /* behind: the ranges forbid it */
    mn_status st = geo_solve(mn_ik_ccd, m, d, &p, &o, &r);
    CHECK(st == MN_ERR_UNREACHABLE || st == MN_ERR_NOCONVERGE);
    CHECK(r.message[0] != 0);
    CHECK(mn_q_within_limits(m, d->q, 0));
    CHECK(geo_all_finite(m, d));
    /* a seed outside the ranges ends inside them */
    d->q[0] = -0.9, d->q[1] = 0.8, d->q[2] = 0.9;
    p.target_pos = mn_v3(2.5, 1.0, 0);
    mn_status s3 = geo_solve(mn_ik_ccd, m, d, &p, &o, &r);
    CHECK(s3 == MN_OK);
    if (s3 != MN_OK)
        fprintf(stderr, "seed outside: %s q %g %g %g\n", r.message, d->q[0], d->q[1], d->q[2]);
    CHECK(mn_q_within_limits(m, d->q, 0));
    mn_data_destroy(d);
    mn_model_destroy(m);

    m = geo_balls(0.4);
    d = mn_data_create(m, 0);
    p = mn_ik_problem_default();
    p.tip = 3;
    p.target_pos = mn_v3(1.5, -1.0, 0.5);
    st = geo_solve(mn_ik_ccd, m, d, &p, &o, &r);
    CHECK(st != MN_ERR_ARG && st != MN_ERR_NOMEM);
    CHECK(mn_q_within_limits(m, d->q, 1e-9));
    /* with the limits ignored the same target is reached, so the limits did the work */
    mn_data_reset(m, d);
    o.respect_limits = 0;
    CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_OK);
    CHECK(!mn_q_within_limits(m, d->q, 1e-9));
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A stiff distal joint (w_i = 1 / stiffness) takes a smaller share of the motion. */
static void test_stiffness_weights(void) {
    double moved[2];
    for (int stiff = 0; stiff < 2; stiff++) {
        mn_spec* s = mn_spec_create("w");
        geo_add(s, "a", -1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 0, 1));
        geo_add(s, "b", 0, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
        geo_add(s, "c", 1, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
        if (stiff) mn_spec_joint(s, 2)->stiffness = 20.0;
        mn_model* m = geo_compile(s);
        mn_data* d = mn_data_create(m, 0);
        d->q[0] = d->q[1] = d->q[2] = 0.3;
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 2;
        p.point = mn_v3(1, 0, 0);
        p.target_pos = mn_v3(1.0, 2.0, 0);
        mn_ik_options o = ccd_options();
        mn_ik_result r;
        CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_OK);
        moved[stiff] = fabs(d->q[2] - 0.3);
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
    CHECK(moved[1] < 0.5 * moved[0]);
}

/* Welman Fig. 4.2: a straight chain, the target pulled inward along it. Every rotation is
 * orthogonal to the error there; CCD must still bend the chain and reach the target. */
static void test_welman_fig42_singular(void) {
    mn_model* m = geo_planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    const double xs[3] = {2.5, 1.5, 0.8};
    for (int t = 0; t < 3; t++) {
        mn_data_reset(m, d);
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 2;
        p.point = mn_v3(1, 0, 0);
        p.target_pos = mn_v3(xs[t], 0, 0);
        mn_ik_options o = ccd_options();
        mn_ik_result r;
        mn_status st = geo_solve(mn_ik_ccd, m, d, &p, &o, &r);
        CHECK(st == MN_OK);
        if (st != MN_OK) fprintf(stderr, "fig 4.2 x=%g: %s\n", xs[t], r.message);
        CHECK(geo_pos_err(m, d, &p) <= 1e-6);
        CHECK(fabs(d->q[0]) + fabs(d->q[1]) + fabs(d->q[2]) > 0.1); /* it bent */
        /* at 2.5 the target is ahead of every pivot: each joint already points at it,
         * the first sweep cannot move, and the stall kick bends the chain */
        if (t == 0) {
            CHECK(r.restarts >= 1);
            /* without the nudge CCD stays on the straight line, as Welman describes */
            mn_data_reset(m, d);
            o.max_restarts = 0;
            CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_ERR_UNREACHABLE);
            CHECK(fabs(d->q[0]) + fabs(d->q[1]) + fabs(d->q[2]) == 0.0);
        }
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A prismatic joint moves by eq. 4.24: a turret that turns and extends. */
static void test_slide(void) {
    mn_spec* s = mn_spec_create("turret");
    geo_add(s, "turn", -1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 0, 1));
    int e = geo_add(s, "extend", 0, MN_JOINT_SLIDE, mn_v3(1, 0, 0), mn_v3(1, 0, 0));
    mn_spec_joint(s, e)->limited = 1;
    mn_spec_joint(s, e)->range[0] = 0;
    mn_spec_joint(s, e)->range[1] = 1;
    mn_model* m = geo_compile(s);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 1;
    p.target_pos = mn_v3(0, 1.5, 0);
    mn_ik_options o = ccd_options();
    mn_ik_result r;
    CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_OK);
    CHECK_NEAR(d->q[0], MN_PI / 2, 1e-6);
    CHECK_NEAR(d->q[1], 0.5, 1e-6);
    /* beyond the slide's range: stretched toward the target, within the range */
    mn_data_reset(m, d);
    p.target_pos = mn_v3(0, 3, 0);
    CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK_NEAR(d->q[1], 1.0, 1e-12);
    CHECK_NEAR(r.pos_err, 1.0, 1e-6);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Same seed, same answer, bit for bit; no heap allocation inside the solve. */
static void test_deterministic_and_no_alloc(void) {
    mn_model* m = geo_spatial7();
    mn_data* d1 = mn_data_create(m, 0);
    mn_data* d2 = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 6;
    p.point = mn_v3(0.2, 0, 0);
    p.target_pos = mn_v3(0.8, 0.9, 0.4);
    p.use_orientation = 1;
    p.target_rot = mn_quat_axis_angle(mn_v3(0, 0, 1), 1.0);
    mn_ik_options o = ccd_options();
    o.max_iters = 300;
    mn_ik_result r1, r2;
    for (int i = 0; i < 7; i++)
        d1->q[i] = d2->q[i] = 0.1 * i;
    long before = mn_alloc_count();
    mn_status s1 = geo_solve(mn_ik_ccd, m, d1, &p, &o, &r1);
    CHECK(mn_alloc_count() == before);
    mn_status s2 = geo_solve(mn_ik_ccd, m, d2, &p, &o, &r2);
    CHECK(s1 == s2);
    CHECK(r1.iterations == r2.iterations);
    CHECK(memcmp(d1->q, d2->q, sizeof(double) * (size_t)m->nq) == 0);
    mn_data_destroy(d1);
    mn_data_destroy(d2);
    mn_model_destroy(m);
}

/* Through the public entry point: the dispatcher reaches this method. */
static void test_through_mn_ik_solve(void) {
    mn_model* m = geo_planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 2;
    p.point = mn_v3(1, 0, 0);
    p.target_pos = mn_v3(1.2, 1.9, 0);
    mn_ik_options o = ccd_options();
    mn_ik_result r;
    CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_OK);
    CHECK(geo_pos_err(m, d, &p) <= 1e-6);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* An orientation goal alone: the tip frame turns onto the target, the position is free. */
static void test_orientation_only(void) {
    mn_model* m = geo_spatial7();
    mn_data* d = mn_data_create(m, 0);
    for (int i = 0; i < 7; i++)
        d->q[i] = 0.2;
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 6;
    p.use_position = 0;
    p.use_orientation = 1;
    p.target_rot = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(0.3, -1, 0.5)), 1.4);
    mn_ik_options o = ccd_options();
    mn_ik_result r;
    CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_OK);
    CHECK(geo_rot_err(m, d, &p) <= 1e-6);
    CHECK(r.pos_err == 0.0);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* The target is given in the base joint's frame, not the world's; joints above the base
 * do not move. */
static void test_base_frame(void) {
    mn_spec* s = mn_spec_create("torso_arm");
    geo_add(s, "torso", -1, MN_JOINT_HINGE, mn_v3(0.5, -0.2, 0.3), mn_v3(1, 0, 0));
    geo_add(s, "a", 0, MN_JOINT_HINGE, mn_v3(0, 1, 0), mn_v3(0, 0, 1));
    geo_add(s, "b", 1, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 1, 0));
    geo_add(s, "c", 2, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
    mn_model* m = geo_compile(s);
    mn_data* d = mn_data_create(m, 0);
    d->q[0] = 0.7;
    mn_ik_problem p = mn_ik_problem_default();
    p.base = 0;
    p.tip = 3;
    p.point = mn_v3(1, 0, 0);
    p.target_pos = mn_v3(1.0, 2.5, 0.8);
    mn_ik_options o = ccd_options();
    mn_ik_result r;
    CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_OK);
    CHECK(d->q[0] == 0.7);
    mn_fk(m, d);
    mn_vec3 want = mn_xform_apply(&d->xf[0], p.target_pos);
    CHECK(mn_vec3_dist(mn_point_world(d, 3, p.point), want) <= 1e-6);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Running out of iterations is NOCONVERGE with a message and the best pose so far. */
static void test_budget(void) {
    mn_model* m = geo_spatial7();
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 6;
    p.point = mn_v3(0.2, 0, 0);
    p.target_pos = mn_v3(-0.5, 1.2, 0.9);
    mn_fk(m, d);
    double before = mn_vec3_dist(mn_point_world(d, 6, p.point), p.target_pos);
    mn_ik_options o = ccd_options();
    o.max_iters = 2;
    mn_ik_result r;
    CHECK(geo_solve(mn_ik_ccd, m, d, &p, &o, &r) == MN_ERR_NOCONVERGE);
    CHECK(r.iterations == 2);
    CHECK(strstr(r.message, "ccd") != NULL);
    CHECK(r.pos_err < before);
    CHECK_NEAR(r.pos_err, geo_pos_err(m, d, &p), 1e-12);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_degenerate_targets(void) {
    geo_degenerate_targets(mn_ik_ccd);
}

static void test_extreme_targets(void) {
    geo_extreme_targets(mn_ik_ccd);
}

/* Random chains of hinges, slides and balls with random limits and targets. */
static void test_random_chains(void) {
    int solved = geo_random_robustness(mn_ik_ccd, 12345u, 40, 0);
    printf("     %d of 160 random solves met their goal\n", solved);
    CHECK(solved > 0);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_hinge_step_is_the_maximum);
    RUN(test_best_rotation);
    RUN(test_ball_clamp_matches_model);
    RUN(test_planar_reach);
    RUN(test_spatial7_position_and_orientation);
    RUN(test_ball_chain);
    RUN(test_limits);
    RUN(test_stiffness_weights);
    RUN(test_welman_fig42_singular);
    RUN(test_slide);
    RUN(test_orientation_only);
    RUN(test_base_frame);
    RUN(test_budget);
    RUN(test_degenerate_targets);
    RUN(test_extreme_targets);
    RUN(test_random_chains);
    RUN(test_deterministic_and_no_alloc);
    RUN(test_through_mn_ik_solve);
    return mn_test_report();
}
