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

static inline int geo_add(mn_spec* s, const char* name, int parent, mn_joint_type type, mn_vec3 offset,
                          mn_vec3 axis) {
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
    const mn_vec3 axes[7] = {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}};
    mn_spec* s = mn_spec_create("spatial7");
    for (int i = 0; i < 7; i++) geo_add(s, names[i], i - 1, MN_JOINT_HINGE, mn_v3(i ? 0.3 : 0, 0, 0), axes[i]);
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
static inline mn_status geo_solve(geo_method f, const mn_model* m, mn_data* d, const mn_ik_problem* p,
                                  const mn_ik_options* o, mn_ik_result* r) {
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

#endif
