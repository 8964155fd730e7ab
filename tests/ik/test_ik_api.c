/* The mn_ik_solve entry point: defaults, method names, the bad-input table (status,
 * message, q unchanged, no NaN), targets in a base joint's frame, end-effector points,
 * ball-joint chains with swing and twist limits, the result's fields, dispatch to every
 * method, and the arena left as it was. */
#include <marionette/ik.h>
#include <marionette/model.h>

#include <stdlib.h>
#include <string.h>

#include "ik/ik_common.h"
#include "test.h"

static int add(mn_spec* s, const char* name, int parent, mn_joint_type type, mn_vec3 offset,
               mn_vec3 axis) {
    mn_joint_def d = mn_joint_default();
    d.name = name;
    d.parent = parent;
    d.type = type;
    d.offset = offset;
    d.axis = axis;
    int i = mn_spec_add_joint(s, &d, NULL);
    CHECK(i >= 0);
    return i;
}

/* root (FIXED) - j1 (hinge z) - j2 (hinge y, 1 up) - j3 (hinge y, 1 up) - tip (FIXED, 1
 * up); a side branch "side" off the root and a zero-length chain "z1"-"z2" off the root. */
static mn_model* arm(void) {
    mn_spec* s = mn_spec_create("arm");
    int r = add(s, "root", -1, MN_JOINT_FIXED, mn_v3(0, 0, 0), mn_v3(0, 0, 1));
    int j1 = add(s, "j1", r, MN_JOINT_HINGE, mn_v3(0, 0, 0.5), mn_v3(0, 0, 1));
    int j2 = add(s, "j2", j1, MN_JOINT_HINGE, mn_v3(0, 0, 1), mn_v3(0, 1, 0));
    int j3 = add(s, "j3", j2, MN_JOINT_HINGE, mn_v3(0, 0, 1), mn_v3(0, 1, 0));
    add(s, "tip", j3, MN_JOINT_FIXED, mn_v3(0, 0, 1), mn_v3(0, 0, 1));
    add(s, "side", r, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
    int z1 = add(s, "z1", r, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(1, 0, 0));
    add(s, "z2", z1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 1, 0));
    add(s, "fixedonly", r, MN_JOINT_FIXED, mn_v3(0, 1, 0), mn_v3(0, 0, 1));
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

static int J(const mn_model* m, const char* name) {
    int j = mn_model_find_joint(m, name);
    CHECK(j >= 0);
    return j;
}

static void test_defaults_and_names(void) {
    mn_ik_options o = mn_ik_default();
    CHECK(o.method == MN_IK_LM);
    CHECK(o.tol_pos == 1e-5 && o.tol_rot == 1e-5);
    CHECK(o.max_iters == 100 && o.max_restarts == 100 && o.seed == 1);
    CHECK(o.respect_limits == 1 && o.max_step == 0.5 && o.damping == 1e-3);
    CHECK(o.nullspace == 0 && o.nullspace_gain == 0.1 && o.timeout_ms == 0 && o.timeout_cpu == 0);
    mn_ik_problem p = mn_ik_problem_default();
    CHECK(p.use_position == 1 && p.use_orientation == 0);
    CHECK(p.w_pos == 1 && p.w_rot == 1 && p.target_rot.w == 1);
    for (int i = 0; i < MN_IK_METHOD_COUNT; i++)
        CHECK(mn_ik_method_parse(mn_ik_method_name((mn_ik_method)i)) == i);
    CHECK(mn_ik_method_parse("LM") == -1);
    CHECK(mn_ik_method_parse("") == -1);
    CHECK(mn_ik_method_parse(NULL) == -1);
    CHECK(!strcmp(mn_ik_method_name(MN_IK_METHOD_COUNT), "unknown"));
}

/* ---- the bad-input table -------------------------------------------------------------------- */
typedef struct bad_case {
    const char* what;
    const char* field; /* expected in the message */
    void (*apply)(const mn_model* m, mn_ik_problem* p, mn_ik_options* o);
} bad_case;

static void nan_target(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->target_pos.y = NAN;
}
static void inf_target(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->target_pos.z = INFINITY;
}
static void nan_rot(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->use_orientation = 1;
    p->target_rot.x = NAN;
}
static void zero_quat(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->use_orientation = 1;
    p->target_rot = mn_q4(0, 0, 0, 0);
}
static void tol_zero(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    o->tol_pos = 0;
}
static void tol_negative(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    o->tol_pos = -1e-3;
}
static void tol_rot_zero(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->use_orientation = 1;
    o->tol_rot = 0;
}
static void tol_nan(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    o->tol_pos = NAN;
}
static void tip_not_below(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->base = mn_model_find_joint(m, "side");
}
static void tip_above(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->base = mn_model_find_joint(m, "tip");
    p->tip = mn_model_find_joint(m, "j2");
}
static void base_is_tip(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->base = p->tip;
}
static void tip_out_of_range(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->tip = m->njoint;
}
static void tip_negative(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->tip = -1;
}
static void base_out_of_range(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->base = -2;
}
static void zero_length(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->tip = mn_model_find_joint(m, "z2");
}
static void empty_chain(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->tip = mn_model_find_joint(m, "fixedonly");
}
static void no_goal(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->use_position = 0;
}
static void weight_zero(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->w_pos = 0;
}
static void point_nan(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    p->point.x = NAN;
}
static void bad_method(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    o->method = MN_IK_METHOD_COUNT;
}
static void iters_zero(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    o->max_iters = 0;
}
static void restarts_negative(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    o->max_restarts = -1;
}
static void damping_negative(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    o->damping = -1;
}
static void step_nan(const mn_model* m, mn_ik_problem* p, mn_ik_options* o) {
    o->max_step = NAN;
}

static const bad_case bad_cases[] = {
    {"NaN target", "target_pos", nan_target},
    {"infinite target", "target_pos", inf_target},
    {"NaN orientation", "target_rot", nan_rot},
    {"zero quaternion", "target_rot", zero_quat},
    {"tol 0", "tol_pos", tol_zero},
    {"tol < 0", "tol_pos", tol_negative},
    {"tol_rot 0", "tol_rot", tol_rot_zero},
    {"tol NaN", "tol_pos", tol_nan},
    {"tip not below base", "tip", tip_not_below},
    {"tip above base", "tip", tip_above},
    {"base == tip", "tip", base_is_tip},
    {"tip out of range", "tip", tip_out_of_range},
    {"tip -1", "tip", tip_negative},
    {"base -2", "base", base_out_of_range},
    {"zero-length chain", "zero-length", zero_length},
    {"empty chain", "chain", empty_chain},
    {"no goal", "goal", no_goal},
    {"weight 0", "w_pos", weight_zero},
    {"NaN point", "point", point_nan},
    {"bad method", "method", bad_method},
    {"max_iters 0", "max_iters", iters_zero},
    {"max_restarts < 0", "max_restarts", restarts_negative},
    {"damping < 0", "damping", damping_negative},
    {"max_step NaN", "max_step", step_nan},
};

static void test_bad_input(void) {
    mn_model* m = arm();
    mn_data* d = mn_data_create(m, 0);
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    for (int i = 0; i < m->nq; i++)
        d->q[i] = 0.1 * (i + 1);
    mn_fk(m, d);
    memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
    size_t used = d->arena.used;
    for (size_t k = 0; k < sizeof bad_cases / sizeof bad_cases[0]; k++) {
        for (int meth = 0; meth < MN_IK_METHOD_COUNT; meth++) {
            mn_ik_problem p = mn_ik_problem_default();
            p.base = J(m, "root");
            p.tip = J(m, "tip");
            p.target_pos = mn_v3(0.5, 0.5, 2);
            mn_ik_options o = mn_ik_default();
            o.method = (mn_ik_method)meth;
            bad_cases[k].apply(m, &p, &o);
            mn_ik_result r;
            memset(&r, 0x5a, sizeof r);
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            int ok = s == MN_ERR_ARG && r.status == MN_ERR_ARG &&
                     strstr(r.message, bad_cases[k].field) != NULL;
            if (!ok)
                fprintf(stderr, "bad input '%s' (%s): status %s, message '%s'\n", bad_cases[k].what,
                        mn_ik_method_name(o.method), mn_status_name(s), r.message);
            CHECK(ok);
            CHECK(memcmp(q0, d->q, sizeof(double) * (size_t)m->nq) == 0);
            CHECK(d->arena.used == used);
        }
    }
    /* NULL arguments and a NaN seed state. */
    mn_ik_problem p = mn_ik_problem_default();
    p.base = J(m, "root");
    p.tip = J(m, "tip");
    mn_ik_options o = mn_ik_default();
    mn_ik_result r;
    CHECK(mn_ik_solve(NULL, d, &p, &o, &r) == MN_ERR_ARG);
    CHECK(mn_ik_solve(m, NULL, &p, &o, &r) == MN_ERR_ARG);
    CHECK(mn_ik_solve(m, d, NULL, &o, &r) == MN_ERR_ARG);
    /* NULL options mean mn_ik_default(): the same answer, bit for bit. */
    memcpy(d->q, q0, sizeof(double) * (size_t)m->nq);
    CHECK(mn_ik_solve(m, d, &p, NULL, &r) == MN_OK);
    double* qnull = malloc(sizeof(double) * (size_t)m->nq);
    memcpy(qnull, d->q, sizeof(double) * (size_t)m->nq);
    memcpy(d->q, q0, sizeof(double) * (size_t)m->nq);
    CHECK(mn_ik_solve(m, d, &p, &o, NULL) == MN_OK); /* a result is optional */
    CHECK(memcmp(qnull, d->q, sizeof(double) * (size_t)m->nq) == 0);
    free(qnull);
    memcpy(d->q, q0, sizeof(double) * (size_t)m->nq);
    d->q[J(m, "j2")] = NAN;
    CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_ERR_ARG);
    CHECK(strstr(r.message, "q") != NULL);
    free(q0);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A target given in a base joint's frame (not the world) is met in that frame; joints
 * above the base and off the chain do not move. */
static void test_base_frame_and_point(void) {
    mn_model* m = arm();
    mn_data* d = mn_data_create(m, 0);
    int j1 = J(m, "j1"), tip = J(m, "tip"), side = J(m, "side");
    d->q[m->jnt_qadr[j1]] = 0.7;
    d->q[m->jnt_qadr[side]] = -0.4;
    d->q[m->jnt_qadr[J(m, "j2")]] = 0.3;
    mn_fk(m, d);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = j1; /* the chain is j2, j3 */
    p.tip = tip;
    p.point = mn_v3(0.1, 0, 0.2);
    p.target_pos = mn_v3(0.8, 0, 1.2); /* j2 and j3 turn about y: the point stays at y = 0 */
    for (int meth = 0; meth < 4; meth++) {
        mn_data_reset(m, d);
        d->q[m->jnt_qadr[j1]] = 0.7;
        d->q[m->jnt_qadr[side]] = -0.4;
        d->q[m->jnt_qadr[J(m, "j2")]] = 0.3;
        mn_ik_options o = mn_ik_default();
        o.method = (mn_ik_method)meth;
        o.max_iters = meth == MN_IK_JT ? 100000 : 500;
        mn_ik_result r;
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        if (s != MN_OK)
            fprintf(stderr, "base frame %s: %s\n", mn_ik_method_name(o.method), r.message);
        CHECK(s == MN_OK);
        CHECK(d->q[m->jnt_qadr[j1]] == 0.7);
        CHECK(d->q[m->jnt_qadr[side]] == -0.4);
        /* Check in the base frame from the world frames d holds. */
        mn_xform B = d->xf[j1], Bi = mn_xform_inverse(&B);
        mn_vec3 pw = mn_point_world(d, tip, p.point);
        mn_vec3 pb = mn_xform_apply(&Bi, pw);
        CHECK(mn_vec3_dist(pb, p.target_pos) <= 1.01e-5);
        CHECK(r.pos_err <= 1e-5 && r.rot_err == 0);
        CHECK(r.iterations > 0 && r.time_us >= 0 && r.message[0] == 0);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Orientation-only goals, and a world base (-1). */
static void test_orientation_only(void) {
    mn_model* m = arm();
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = -1;
    p.tip = J(m, "tip");
    p.use_position = 0;
    p.use_orientation = 1;
    /* Reachable: z rotation then y rotation (j1 about z, j2 + j3 about y). */
    mn_quat qz = mn_quat_axis_angle(mn_v3(0, 0, 1), 0.9),
            qy = mn_quat_axis_angle(mn_v3(0, 1, 0), 0.6);
    p.target_rot = mn_quat_mul(qz, qy);
    for (int meth = 0; meth < 4; meth++) {
        mn_data_reset(m, d);
        mn_ik_options o = mn_ik_default();
        o.method = (mn_ik_method)meth;
        o.max_iters = meth == MN_IK_JT ? 100000 : 500;
        mn_ik_result r;
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        if (s != MN_OK)
            fprintf(stderr, "orientation %s: %s\n", mn_ik_method_name(o.method), r.message);
        CHECK(s == MN_OK);
        mn_quat got = mn_quat_from_mat3(&d->xf[p.tip].R);
        CHECK(mn_quat_angle_between(got, p.target_rot) <= 1.01e-5);
        CHECK(r.pos_err == 0);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A limb of ball joints with swing-cone and twist limits (BVH-style), on a FREE root. */
static mn_model* limb(void) {
    mn_spec* s = mn_spec_create("limb");
    mn_joint_def d = mn_joint_default();
    d.name = "hips";
    d.type = MN_JOINT_FREE;
    int r = mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.type = MN_JOINT_BALL;
    d.limited = 1;
    d.axis = mn_v3(0, -1, 0);
    d.swing = 1.2;
    d.twist[0] = -0.5;
    d.twist[1] = 0.5;
    d.name = "shoulder";
    d.parent = r;
    d.offset = mn_v3(0.2, 0, 0);
    int sh = mn_spec_add_joint(s, &d, NULL);
    d.name = "elbow";
    d.parent = sh;
    d.offset = mn_v3(0, -0.3, 0);
    d.swing = 1.0;
    int el = mn_spec_add_joint(s, &d, NULL);
    CHECK(r >= 0 && sh >= 0 && el >= 0);
    add(s, "hand", el, MN_JOINT_FIXED, mn_v3(0, -0.25, 0), mn_v3(0, 0, 1));
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

/* A chain of ball joints with swing-cone and twist limits (a BVH-style limb). */
static void test_ball_chain_limits(void) {
    mn_model* m = limb();
    if (!m) return;
    int sh, el;
    mn_data* dd = mn_data_create(m, 0);
    sh = J(m, "shoulder"); /* model indices (compiling may reorder) */
    el = J(m, "elbow");
    mn_ik_problem p = mn_ik_problem_default();
    p.base = J(m, "hips");
    p.tip = J(m, "hand");
    /* Two targets from poses within the limits, one straight above the shoulder, which
     * needs a swing of about pi in all (the cones give 2.2). */
    mn_vec3 targets[3];
    for (int t = 0; t < 2; t++) {
        mn_quat qs = mn_quat_axis_angle(mn_v3(1, 0, 0), t ? -0.9 : 0.8);
        mn_quat qe = mn_quat_mul(mn_quat_axis_angle(mn_v3(0, 0, 1), t ? 0.6 : 0.9),
                                 mn_quat_axis_angle(mn_v3(0, -1, 0), 0.3));
        double* q = dd->q;
        q[m->jnt_qadr[sh]] = qs.w, q[m->jnt_qadr[sh] + 1] = qs.x, q[m->jnt_qadr[sh] + 2] = qs.y,
        q[m->jnt_qadr[sh] + 3] = qs.z;
        q[m->jnt_qadr[el]] = qe.w, q[m->jnt_qadr[el] + 1] = qe.x, q[m->jnt_qadr[el] + 2] = qe.y,
        q[m->jnt_qadr[el] + 3] = qe.z;
        CHECK(mn_q_within_limits(m, dd->q, 0));
        mn_fk(m, dd);
        targets[t] = mn_point_world(dd, p.tip, p.point);
    }
    targets[2] = mn_v3(0.2, 0.5, 0);
    for (int meth = 0; meth < 4; meth++) {
        for (int t = 0; t < 3; t++) {
            mn_data_reset(m, dd);
            p.target_pos = targets[t];
            mn_ik_options o = mn_ik_default();
            o.method = (mn_ik_method)meth;
            o.max_iters = meth == MN_IK_JT ? 100000 : 500;
            mn_ik_result res;
            mn_status st = mn_ik_solve(m, dd, &p, &o, &res);
            CHECK(mn_q_within_limits(m, dd->q, 1e-9));
            for (int i = 0; i < m->nq; i++)
                CHECK(isfinite(dd->q[i]));
            /* The third target needs more swing than the limits give: LM reports it. */
            if (meth == MN_IK_LM) {
                if (t < 2)
                    CHECK(st == MN_OK);
                else
                    CHECK(st == MN_ERR_UNREACHABLE && res.pos_err > 1e-3);
            }
            if (st == MN_OK)
                CHECK(mn_vec3_dist(mn_point_world(dd, p.tip, p.point), p.target_pos) <= 1.01e-5);
        }
    }
    mn_data_destroy(dd);
    mn_model_destroy(m);
}

/* Out of iterations: NOCONVERGE with the best pose and the message; never NaN. */
static void test_budget(void) {
    mn_model* m = arm();
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = J(m, "root");
    p.tip = J(m, "tip");
    p.target_pos = mn_v3(1.2, 1.0, 1.5);
    mn_ik_options o = mn_ik_default();
    o.method = MN_IK_JT;
    o.max_iters = 3;
    mn_ik_result r;
    d->q[J(m, "j2")] = 0.2;
    mn_fk(m, d);
    double before = mn_vec3_dist(mn_point_world(d, p.tip, p.point), p.target_pos);
    mn_status s = mn_ik_solve(m, d, &p, &o, &r);
    CHECK(s == MN_ERR_NOCONVERGE);
    CHECK(strstr(r.message, "iteration") != NULL);
    CHECK(r.iterations == 3);
    CHECK(r.pos_err < before);
    CHECK_NEAR(r.pos_err, mn_vec3_dist(mn_point_world(d, p.tip, p.point), p.target_pos), 1e-12);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Whatever finite problem comes in, every method returns a status from the documented
 * set, leaves q finite and within limits, and never moves joints off the chain: random
 * base/tip pairs, targets from tiny to 1e300, tolerances from 1e-300 up, odd weights. */
static void random_problems(mn_model* m) {
    mn_data* d = mn_data_create(m, 0);
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    uint64_t z = 77;
    for (int trial = 0; trial < 400; trial++) {
        double u[12];
        for (int i = 0; i < 12; i++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            u[i] = (double)(z >> 11) * (1.0 / 9007199254740992.0);
        }
        double scale = pow(10.0, -300 + 600 * u[0]);
        if (u[1] < 0.5) scale = pow(10.0, -3 + 6 * u[1]);
        mn_ik_problem p = mn_ik_problem_default();
        p.base = (int)(u[2] * (m->njoint + 1)) - 1;
        p.tip = (int)(u[3] * m->njoint);
        p.target_pos =
            mn_v3(scale * (2 * u[4] - 1), scale * (2 * u[5] - 1), scale * (2 * u[6] - 1));
        p.use_orientation = u[7] < 0.5;
        p.use_position = !p.use_orientation || u[8] < 0.5;
        p.target_rot = mn_q4(2 * u[8] - 1, 2 * u[9] - 1, 2 * u[10] - 1, 0.5);
        p.w_rot = u[11] < 0.2 ? 1e-200 : u[11] < 0.4 ? 1e200 : 1.0;
        p.point = mn_v3(0, u[9] < 0.3 ? scale : 0, 0);
        mn_ik_options o = mn_ik_default();
        o.method = (mn_ik_method)(trial % MN_IK_METHOD_COUNT);
        o.tol_pos = o.tol_rot = u[10] < 0.2 ? 1e-300 : 1e-5;
        o.max_iters = 50;
        o.max_restarts = 3;
        mn_data_reset(m, d);
        for (int j = 0; j < m->njoint; j++) {
            double* qj = d->q + m->jnt_qadr[j];
            if (m->jnt_type[j] == MN_JOINT_HINGE || m->jnt_type[j] == MN_JOINT_SLIDE)
                qj[0] = 0.3 * sin(trial + j);
            if (m->jnt_type[j] == MN_JOINT_BALL) {
                mn_quat q = mn_quat_axis_angle(mn_v3(1, 0, 0), 0.3 * sin(trial + j));
                qj[0] = q.w, qj[1] = q.x, qj[2] = q.y, qj[3] = q.z;
            }
        }
        mn_clamp_to_limits(m, d->q);
        memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
        mn_ik_result r;
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        int allowed = s == MN_OK || s == MN_ERR_ARG || s == MN_ERR_UNREACHABLE ||
                      s == MN_ERR_NOCONVERGE ||
                      (s == MN_ERR_UNSUPPORTED && o.method == MN_IK_ANALYTIC);
        if (!allowed)
            fprintf(stderr, "random problem %d: %s %s\n", trial, mn_status_name(s), r.message);
        CHECK(allowed);
        for (int i = 0; i < m->nq; i++)
            CHECK(isfinite(d->q[i]));
        if (!mn_q_within_limits(m, d->q, 1e-9))
            fprintf(stderr, "random problem %d (%s, base %d tip %d): %s, out of limits\n", trial,
                    mn_ik_method_name(o.method), p.base, p.tip, mn_status_name(s));
        CHECK(mn_q_within_limits(m, d->q, 1e-9));
        CHECK(!isnan(r.pos_err) && !isnan(r.rot_err));
        if (s == MN_ERR_ARG) CHECK(memcmp(q0, d->q, sizeof(double) * (size_t)m->nq) == 0);
        /* Joints off the chain keep their values. */
        if (s != MN_ERR_ARG)
            for (int j = 0; j < m->njoint; j++) {
                int on = (p.base < 0 || mn_model_is_ancestor(m, p.base, j)) && j != p.base &&
                         mn_model_is_ancestor(m, j, p.tip);
                int nq = mn_joint_type_nq((mn_joint_type)m->jnt_type[j]);
                if (!on)
                    for (int a = 0; a < nq; a++)
                        CHECK(d->q[m->jnt_qadr[j] + a] == q0[m->jnt_qadr[j] + a]);
            }
    }
    free(q0);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Numbers at the edge of the double range make some steps overflow to NaN; such a step
 * must be rejected, never taken for a perfect one (a NaN rotation used to read as zero
 * error). Found by fuzz/fuzz_ik_solve. */
static void test_overflowing_steps(void) {
    mn_model* m = arm();
    mn_data* d = mn_data_create(m, 0);
    for (int meth = 0; meth < 4; meth++) {
        mn_data_reset(m, d);
        mn_ik_problem p = mn_ik_problem_default();
        p.base = J(m, "root");
        p.tip = J(m, "tip");
        p.use_position = 0;
        p.use_orientation = 1;
        p.target_rot = mn_q4(-4.5e100, -4.5e100, -4.5e100, -4.5e100);
        p.point = mn_v3(-4.5e100, -4.5e100, 2.3e-23);
        p.w_rot = 2.25e-23;
        mn_ik_options o = mn_ik_default();
        o.method = (mn_ik_method)meth;
        o.max_step = 2.25e-23;
        o.max_iters = 40;
        o.max_restarts = 2;
        mn_ik_result r;
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        for (int i = 0; i < m->nq; i++)
            CHECK(isfinite(d->q[i]));
        CHECK(!isnan(r.rot_err));
        if (s == MN_OK) CHECK(r.rot_err <= o.tol_rot);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_random_problems(void) {
    random_problems(arm());
    random_problems(limb());
}

/* ik_common pieces: the ball clamp keeps what is inside, projects what is not; RNG. */
static void test_common_helpers(void) {
    mn_vec3 a = mn_v3(0, 0, 1);
    mn_quat inside =
        mn_quat_mul(mn_quat_axis_angle(mn_v3(1, 0, 0), 0.3), mn_quat_axis_angle(a, 0.2));
    mn_quat c = mn_ball_clamp(inside, a, 0.5, -0.4, 0.4);
    CHECK(mn_quat_angle_between(c, inside) < 1e-12);
    mn_quat outside =
        mn_quat_mul(mn_quat_axis_angle(mn_v3(1, 0, 0), 0.9), mn_quat_axis_angle(a, 0.7));
    c = mn_ball_clamp(outside, a, 0.5, -0.4, 0.4);
    mn_quat want = mn_quat_mul(mn_quat_axis_angle(mn_v3(1, 0, 0), 0.5), mn_quat_axis_angle(a, 0.4));
    CHECK(mn_quat_angle_between(c, want) < 1e-9);
    mn_rng r1, r2;
    mn_rng_seed(&r1, 7);
    mn_rng_seed(&r2, 7);
    double lo = 1, hi = 0;
    for (int i = 0; i < 1000; i++) {
        double u = mn_rng_uniform(&r1);
        CHECK(u == mn_rng_uniform(&r2));
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    CHECK(lo >= 0 && lo < 0.01 && hi < 1 && hi > 0.99);
    double A[9] = {4, 2, 0, 2, 5, 1, 0, 1, 3}, b[3] = {2, 3, 4};
    CHECK(mn_ik_spd_solve(A, 3, b) == 0);
    double A2[9] = {4, 2, 0, 2, 5, 1, 0, 1, 3};
    const double rhs[3] = {2, 3, 4};
    for (int i = 0; i < 3; i++)
        CHECK_NEAR(A2[3 * i] * b[0] + A2[3 * i + 1] * b[1] + A2[3 * i + 2] * b[2], rhs[i], 1e-12);
    double N[4] = {1, 2, 2, 1}, nb[2] = {1, 1};
    CHECK(mn_ik_spd_solve(N, 2, nb) == -1);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_defaults_and_names);
    RUN(test_bad_input);
    RUN(test_base_frame_and_point);
    RUN(test_orientation_only);
    RUN(test_ball_chain_limits);
    RUN(test_budget);
    RUN(test_random_problems);
    RUN(test_overflowing_steps);
    RUN(test_common_helpers);
    return mn_test_report();
}
