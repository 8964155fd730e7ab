/* Small figures shared by the geometric IK tests (test_ik_ccd.c, test_ik_fabrik.c,
 * test_ik_analytic.c): a planar 3-link arm, a spatial 7-hinge arm, a chain of ball joints
 * as a BVH figure has, and helpers to solve with one method after forward kinematics (the
 * state mn_ik_solve hands a method). */
#ifndef MN_GEO_TEST_MODELS_H
#define MN_GEO_TEST_MODELS_H

#include <string.h>

#include <marionette/ik.h>
#include <marionette/model.h>

#include "ik/ik_methods.h"
#include "test.h"

typedef mn_status (*geo_method)(MN_IK_METHOD_ARGS);

static inline int geo_add(mn_spec* s, const char* name, int parent, mn_joint_type type,
                          mn_vec3 offset, mn_vec3 axis) {
    mn_joint_def j = mn_joint_default();
    j.name = name;
    j.parent = parent;
    j.type = type;
    j.offset = offset;
    j.axis = axis;
    mn_error err;
    int i = mn_spec_add_joint(s, &j, &err);
    if (i < 0) fprintf(stderr, "geo_add %s: %s\n", name, err.message);
    return i;
}

static inline mn_model* geo_compile(mn_spec* s) {
    mn_error err;
    mn_model* m = mn_model_compile(s, &err);
    if (!m) fprintf(stderr, "compile: %s\n", err.message);
    mn_spec_destroy(s);
    return m;
}

/* Three unit links in the xy plane, hinges about z; the effector is 1 along x of "c". */
static inline mn_model* geo_planar3(double lo, double hi) {
    mn_spec* s = mn_spec_create("planar3");
    geo_add(s, "a", -1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 0, 1));
    geo_add(s, "b", 0, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
    geo_add(s, "c", 1, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1));
    if (lo < hi)
        for (int i = 0; i < 3; i++) {
            mn_joint_def* j = mn_spec_joint(s, i);
            j->limited = 1;
            j->range[0] = lo;
            j->range[1] = hi;
        }
    return geo_compile(s);
}

/* Seven hinges z, y, x, y, z, y, x, links of 0.3 along x; effector 0.2 past the last. */
static inline mn_model* geo_spatial7(void) {
    static const char* names[7] = {"j0", "j1", "j2", "j3", "j4", "j5", "j6"};
    const mn_vec3 axes[7] = {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {0, 1, 0},
                             {0, 0, 1}, {0, 1, 0}, {1, 0, 0}};
    mn_spec* s = mn_spec_create("spatial7");
    for (int i = 0; i < 7; i++)
        geo_add(s, names[i], i - 1, MN_JOINT_HINGE, mn_v3(i ? 0.3 : 0, 0, 0), axes[i]);
    return geo_compile(s);
}

/* A BVH-like limb: three balls (hip, knee, ankle) one unit apart along -y, and an end
 * site 0.5 further: tip is the end site "toe" (FIXED). */
static inline mn_model* geo_balls(double cone) {
    mn_spec* s = mn_spec_create("balls");
    geo_add(s, "hip", -1, MN_JOINT_BALL, mn_v3(0, 0, 0), mn_v3(0, -1, 0));
    geo_add(s, "knee", 0, MN_JOINT_BALL, mn_v3(0, -1, 0), mn_v3(0, -1, 0));
    geo_add(s, "ankle", 1, MN_JOINT_BALL, mn_v3(0, -1, 0), mn_v3(0, -1, 0));
    geo_add(s, "toe", 2, MN_JOINT_FIXED, mn_v3(0, -0.5, 0), mn_v3(0, 0, 1));
    if (cone > 0)
        for (int i = 0; i < 3; i++) {
            mn_joint_def* j = mn_spec_joint(s, i);
            j->limited = 1;
            j->swing = cone;
            j->twist[0] = -0.2;
            j->twist[1] = 0.2;
        }
    return geo_compile(s);
}

/* Solves as mn_ik_solve would hand the problem to the method: frames current first. */
static inline mn_status geo_solve(geo_method f, const mn_model* m, mn_data* d,
                                  const mn_ik_problem* p, const mn_ik_options* o, mn_ik_result* r) {
    memset(r, 0, sizeof *r);
    mn_fk(m, d);
    size_t mark = mn_arena_mark(&d->arena);
    mn_status st = f(m, d, p, o, r);
    if (mn_arena_mark(&d->arena) != mark) {
        fprintf(stderr, "arena mark not restored\n");
        mn_test_failures++;
    }
    return st;
}

/* World pose of the tip for the state q (d's frames are overwritten). */
static inline mn_xform geo_tip(const mn_model* m, mn_data* d, int tip) {
    mn_fk(m, d);
    return d->xf[tip];
}

/* Independent check of a finished solve: the effector's distance to the target and the
 * tip's rotation angle to it, recomputed by forward kinematics. */
static inline double geo_pos_err(const mn_model* m, mn_data* d, const mn_ik_problem* p) {
    mn_fk(m, d);
    mn_vec3 e = mn_point_world(d, p->tip, p->point);
    mn_vec3 t = p->base >= 0 ? mn_xform_apply(&d->xf[p->base], p->target_pos) : p->target_pos;
    return mn_vec3_dist(e, t);
}

static inline double geo_rot_err(const mn_model* m, mn_data* d, const mn_ik_problem* p) {
    mn_fk(m, d);
    mn_quat qt = mn_quat_from_mat3(&d->xf[p->tip].R);
    return mn_quat_angle_between(qt, mn_quat_normalize(p->target_rot));
}

static inline int geo_all_finite(const mn_model* m, const mn_data* d) {
    for (int i = 0; i < m->nq; i++)
        if (!isfinite(d->q[i])) return 0;
    return 1;
}

/* Targets at extreme distances (1e-300 .. 1e200) and on the base pivot: never NaN in the
 * state, always a status a caller can act on. */
/* Targets on the pivots of a straight chain (the base, the middle joints): zero-length
 * P_id vectors and collinear pulls; the solve reaches them with a finite state. */
static inline void geo_degenerate_targets(geo_method f) {
    mn_model* m = geo_planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    mn_model* mb = geo_balls(0);
    mn_data* db = mn_data_create(mb, 0);
    for (int t = 0; t < 3; t++) {
        mn_data_reset(m, d);
        mn_data_reset(mb, db);
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 2;
        p.point = mn_v3(1, 0, 0);
        p.target_pos = mn_v3(t, 0, 0);
        mn_ik_options o = mn_ik_default();
        o.max_iters = 1000;
        mn_ik_result r;
        CHECK(geo_solve(f, m, d, &p, &o, &r) == MN_OK);
        CHECK(geo_all_finite(m, d));
        CHECK(geo_pos_err(m, d, &p) <= o.tol_pos);
        p.tip = 3;
        p.point = mn_v3(0, 0, 0);
        p.target_pos = mn_v3(0, -t, 0);
        CHECK(geo_solve(f, mb, db, &p, &o, &r) == MN_OK);
        CHECK(geo_all_finite(mb, db));
        CHECK(geo_pos_err(mb, db, &p) <= o.tol_pos);
    }
    mn_data_destroy(d);
    mn_data_destroy(db);
    mn_model_destroy(m);
    mn_model_destroy(mb);
}

static inline void geo_extreme_targets(geo_method f) {
    mn_model* m = geo_balls(0.6);
    mn_data* d = mn_data_create(m, 0);
    const double scales[5] = {1e200, 1e100, 1e-300, 0.0, -1e150};
    for (int i = 0; i < 5; i++)
        for (int orient = 0; orient < 2; orient++) {
            mn_data_reset(m, d);
            mn_ik_problem p = mn_ik_problem_default();
            p.tip = 3;
            p.target_pos = mn_vec3_scale(mn_v3(0.3, -1, 0.2), scales[i]);
            p.use_orientation = orient;
            p.target_rot = mn_quat_axis_angle(mn_v3(0, 1, 0), 2.0);
            p.pole = mn_vec3_scale(mn_v3(1, 0, 0), scales[i]);
            mn_ik_options o = mn_ik_default();
            o.max_iters = 50;
            mn_ik_result r;
            mn_status st = geo_solve(f, m, d, &p, &o, &r);
            CHECK(st == MN_OK || st == MN_ERR_UNREACHABLE || st == MN_ERR_NOCONVERGE ||
                  st == MN_ERR_UNSUPPORTED);
            CHECK(geo_all_finite(m, d));
            CHECK(mn_q_within_limits(m, d->q, 1e-9));
        }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* ---- randomized robustness: random chains, limits, seeds and targets ------------------ */

static inline double geo_rand(unsigned* s) {
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffffff) / (double)0x1000000;
}

static inline mn_vec3 geo_rand_unit(unsigned* s) {
    mn_vec3 v;
    do
        v = mn_v3(2 * geo_rand(s) - 1, 2 * geo_rand(s) - 1, 2 * geo_rand(s) - 1);
    while (mn_vec3_norm(v) < 0.1 || mn_vec3_norm(v) > 1);
    return mn_vec3_normalize(v);
}

/* A chain of 2..7 joints, each a hinge, slide or ball (balls in ball_share of cases), with
 * random axes, offsets, stiffness and, half of the time, limits; the tip carries an end
 * point. */
static inline mn_model* geo_random_chain(unsigned* seed, double ball_share, int* tip) {
    mn_spec* s = mn_spec_create("random");
    int n = 2 + (int)(geo_rand(seed) * 6), parent = -1;
    char name[16];
    for (int i = 0; i < n; i++) {
        mn_joint_def j = mn_joint_default();
        snprintf(name, sizeof name, "j%d", i);
        j.name = name;
        j.parent = parent;
        double u = geo_rand(seed);
        j.type = u < ball_share ? MN_JOINT_BALL : u < 0.9 ? MN_JOINT_HINGE : MN_JOINT_SLIDE;
        j.offset = i ? mn_vec3_scale(geo_rand_unit(seed), 0.2 + geo_rand(seed)) : mn_v3(0, 0, 0);
        j.axis = geo_rand_unit(seed);
        j.stiffness = geo_rand(seed) < 0.3 ? 1 + 5 * geo_rand(seed) : 1.0;
        if (geo_rand(seed) < 0.5) {
            j.limited = 1;
            double a = geo_rand(seed), b = geo_rand(seed);
            j.range[0] = j.type == MN_JOINT_SLIDE ? -0.3 * a : -2 * a;
            j.range[1] = j.type == MN_JOINT_SLIDE ? 0.3 * b : 2 * b;
            j.swing = 0.2 + 2 * geo_rand(seed);
            j.twist[0] = -geo_rand(seed);
            j.twist[1] = geo_rand(seed);
        }
        mn_error err;
        parent = mn_spec_add_joint(s, &j, &err);
    }
    mn_joint_def e = mn_joint_default();
    e.name = "end";
    e.parent = parent;
    e.offset = mn_vec3_scale(geo_rand_unit(seed), 0.3);
    mn_error err;
    *tip = mn_spec_add_joint(s, &e, &err);
    return geo_compile(s);
}

/* Runs a method on random chains and checks what every solve promises, whatever the
 * answer: an allowed status, a finite state with unit quaternions within the limits,
 * errors that match forward kinematics, the arena mark restored, no heap allocation.
 * Returns how many of the 4 * cases solves met their goal. */
static inline int geo_random_robustness(geo_method f, unsigned seed, int cases,
                                        int allow_unsupported) {
    int solved = 0;
    for (int c = 0; c < cases; c++) {
        int tip;
        mn_model* m = geo_random_chain(&seed, 0.3, &tip);
        if (!m) {
            mn_test_failures++;
            continue;
        }
        mn_data* d = mn_data_create(m, 0);
        for (int t = 0; t < 4; t++) {
            mn_data_reset(m, d);
            mn_ik_problem p = mn_ik_problem_default();
            p.tip = tip;
            p.target_pos = mn_vec3_scale(geo_rand_unit(&seed), 3 * geo_rand(&seed));
            p.use_orientation = t >= 2;
            p.target_rot = mn_quat_axis_angle(geo_rand_unit(&seed), 3 * geo_rand(&seed));
            p.pole = t == 1 ? geo_rand_unit(&seed) : mn_v3(0, 0, 0);
            mn_ik_options o = mn_ik_default();
            o.max_iters = 200;
            mn_ik_result r;
            long before = mn_alloc_count();
            mn_status st = geo_solve(f, m, d, &p, &o, &r);
            CHECK(mn_alloc_count() == before);
            CHECK(st == MN_OK || st == MN_ERR_UNREACHABLE || st == MN_ERR_NOCONVERGE ||
                  (allow_unsupported && (st == MN_ERR_UNSUPPORTED || st == MN_ERR_ARG)));
            CHECK(st == r.status);
            solved += st == MN_OK;
            CHECK(st == MN_OK || r.message[0] != 0);
            CHECK(mn_q_within_limits(m, d->q, 1e-9));
            if (st == MN_OK || st == MN_ERR_UNREACHABLE || st == MN_ERR_NOCONVERGE) {
                CHECK(isfinite(r.pos_err) && isfinite(r.rot_err));
                CHECK_NEAR(r.pos_err, geo_pos_err(m, d, &p), 1e-9);
                if (p.use_orientation) CHECK_NEAR(r.rot_err, geo_rot_err(m, d, &p), 1e-6);
            }
        }
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
    return solved;
}

#endif
