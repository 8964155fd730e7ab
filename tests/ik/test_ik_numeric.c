/* The numeric chain IK methods (LM, DLS, PINV, JT, the alternative Jacobian): reachable targets on
 * a planar arm, a 7-DOF spatial chain (the robots from URDF files are in
 * tests/integration/test_ik_robots.c), limits, stiffness, determinism, the singular straight chain
 * of Welman Fig. 4.2, unreachable targets, no heap allocation inside a solve, and the chain
 * Jacobians against finite differences.
 */
#include <marionette/ik.h>
#include <marionette/model.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ik/ik_common.h"
#include "test.h"

static const mn_ik_method numeric[] = {MN_IK_LM, MN_IK_DLS, MN_IK_PINV, MN_IK_JT, MN_IK_ALTJAC};
#define NNUMERIC 5

static uint64_t rng_state = 99;
static double urand(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static int add(mn_spec* s, const char* name, int parent, mn_joint_type type, mn_vec3 offset,
               mn_vec3 axis, double lo, double hi) {
    mn_joint_def d = mn_joint_default();
    d.name = name;
    d.parent = parent;
    d.type = type;
    d.offset = offset;
    d.axis = axis;
    if (lo < hi) {
        d.limited = 1;
        d.range[0] = lo;
        d.range[1] = hi;
    }
    int i = mn_spec_add_joint(s, &d, NULL);
    CHECK(i >= 0);
    return i;
}

/* Three unit links in the xy plane, hinges about z; "tip" is a FIXED joint at the end. */
static mn_model* planar3(double lo, double hi) {
    mn_spec* s = mn_spec_create("planar3");
    int b = add(s, "base", -1, MN_JOINT_FIXED, mn_v3(0, 0, 0), mn_v3(0, 0, 1), 0, 0);
    int j1 = add(s, "j1", b, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 0, 1), lo, hi);
    int j2 = add(s, "j2", j1, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1), lo, hi);
    int j3 = add(s, "j3", j2, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1), lo, hi);
    add(s, "tip", j3, MN_JOINT_FIXED, mn_v3(1, 0, 0), mn_v3(0, 0, 1), 0, 0);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

/* A 7-DOF spatial arm: axes z y z y z y z (one of them skewed), links of 0.3 to 0.4,
 * limits +-2.8 (+-1.9 on the "elbows"), an offset tool frame. */
static mn_model* chain7(void) {
    mn_spec* s = mn_spec_create("chain7");
    int p = add(s, "base", -1, MN_JOINT_FIXED, mn_v3(0, 0, 0), mn_v3(0, 0, 1), 0, 0);
    const char* names[7] = {"a1", "a2", "a3", "a4", "a5", "a6", "a7"};
    for (int i = 0; i < 7; i++) {
        mn_vec3 axis = (i % 2 == 0) ? mn_v3(0, 0, 1) : mn_v3(0, 1, 0);
        if (i == 4) axis = mn_vec3_normalize(mn_v3(0.2, 0.1, 1));
        double lim = (i % 2 == 1) ? 1.9 : 2.8;
        mn_vec3 off = i == 0 ? mn_v3(0, 0, 0.1) : mn_v3(0.02 * (i % 3), 0, 0.3 + 0.02 * i);
        p = add(s, names[i], p, MN_JOINT_HINGE, off, axis, -lim, lim);
    }
    mn_joint_def d = mn_joint_default();
    d.name = "tool";
    d.parent = p;
    d.offset = mn_v3(0.05, 0, 0.12);
    d.orient = mn_quat_axis_angle(mn_v3(1, 0, 0), 0.4);
    CHECK(mn_spec_add_joint(s, &d, NULL) >= 0);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

/* A reachable pose: the tip frame for random joint values within limits (the chain's
 * DOFs only), expressed in the base frame. Leaves d at the seed state it found. */
static void random_target(const mn_model* m, mn_data* d, int base, int tip, mn_ik_problem* p) {
    double* keep = malloc(sizeof(double) * (size_t)m->nq);
    memcpy(keep, d->q, sizeof(double) * (size_t)m->nq);
    for (int j = tip; j != base; j = m->jnt_parent[j]) {
        if (m->jnt_type[j] != MN_JOINT_HINGE) continue;
        double lo = m->jnt_limited[j] ? m->jnt_range[2 * j] : -MN_PI;
        double hi = m->jnt_limited[j] ? m->jnt_range[2 * j + 1] : MN_PI;
        d->q[m->jnt_qadr[j]] = lo + (hi - lo) * (0.05 + 0.9 * urand());
    }
    mn_fk(m, d);
    mn_xform B = base >= 0 ? d->xf[base] : mn_xform_identity();
    mn_xform Bi = mn_xform_inverse(&B);
    mn_xform T = mn_xform_mul(&Bi, &d->xf[tip]);
    p->target_pos = mn_xform_apply(&T, p->point);
    p->target_rot = mn_quat_from_mat3(&T.R);
    memcpy(d->q, keep, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    free(keep);
}

/* Independent check of a result: the tip pose from mn_fk against the problem's target. */
static void check_pose(const mn_model* m, const mn_data* d, const mn_ik_problem* p, double tol) {
    mn_xform B = p->base >= 0 ? d->xf[p->base] : mn_xform_identity();
    mn_xform Bi = mn_xform_inverse(&B);
    mn_xform T = mn_xform_mul(&Bi, &d->xf[p->tip]);
    if (p->use_position) CHECK(mn_vec3_dist(mn_xform_apply(&T, p->point), p->target_pos) <= tol);
    if (p->use_orientation) {
        mn_quat q = mn_quat_from_mat3(&T.R);
        CHECK(mn_quat_angle_between(q, mn_quat_normalize(p->target_rot)) <= tol);
    }
    CHECK(mn_q_within_limits(m, d->q, 1e-9));
}

static mn_ik_options opts_for(mn_ik_method meth) {
    mn_ik_options o = mn_ik_default();
    o.method = meth;
    if (meth == MN_IK_JT)
        o.max_iters = 200000; /* steepest descent: linear convergence */
    else if (meth != MN_IK_LM)
        o.max_iters = 500;
    return o;
}

/* ---- reachable targets -------------------------------------------------------------------- */

static void test_planar_reach(void) {
    mn_model* m = planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = mn_model_find_joint(m, "base");
    p.tip = mn_model_find_joint(m, "tip");
    mn_vec3 targets[4] = {mn_v3(2, 1, 0), mn_v3(-1, 1.5, 0), mn_v3(0.5, -2.2, 0),
                          mn_v3(1.2, 0.3, 0)};
    for (int k = 0; k < NNUMERIC; k++) {
        for (int t = 0; t < 4; t++) {
            mn_data_reset(m, d);
            d->q[0] = 0.3, d->q[1] = 0.4, d->q[2] = 0.5; /* away from the straight singularity */
            p.target_pos = targets[t];
            mn_ik_options o = opts_for(numeric[k]);
            mn_ik_result r;
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            if (s != MN_OK)
                fprintf(stderr, "planar %s target %d: %s\n", mn_ik_method_name(numeric[k]), t,
                        r.message);
            CHECK(s == MN_OK);
            CHECK(r.pos_err <= o.tol_pos);
            check_pose(m, d, &p, 1.01e-5);
        }
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Pose goals (position and orientation) drawn by FK from random joint values. */
static void reach_poses(mn_model* m, int base, int tip, int ntargets, const char* what) {
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.use_orientation = 1;
    for (int t = 0; t < ntargets; t++) {
        random_target(m, d, base, tip, &p);
        for (int k = 0; k < NNUMERIC; k++) {
            mn_data_reset(m, d);
            /* A seed near the target's joints would be too easy: start from mid-range. */
            for (int j = tip; j != base; j = m->jnt_parent[j])
                if (m->jnt_type[j] == MN_JOINT_HINGE && m->jnt_limited[j])
                    d->q[m->jnt_qadr[j]] =
                        0.5 * (m->jnt_range[2 * j] + m->jnt_range[2 * j + 1]) + 0.1;
            mn_ik_options o = opts_for(numeric[k]);
            mn_ik_result r;
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            /* The methods without restarts may end in a local minimum from a far seed: only
             * LM has to solve every target; the others must at least not get worse. */
            if (numeric[k] == MN_IK_LM) {
                if (s != MN_OK) fprintf(stderr, "%s target %d: lm: %s\n", what, t, r.message);
                CHECK(s == MN_OK);
                check_pose(m, d, &p, 1.01e-5);
            } else if (s == MN_OK) {
                check_pose(m, d, &p, 1.01e-5);
            } else {
                CHECK(s == MN_ERR_UNREACHABLE || s == MN_ERR_NOCONVERGE);
                CHECK(mn_q_within_limits(m, d->q, 1e-9));
            }
        }
    }
    mn_data_destroy(d);
}

/* From a seed near the answer (the tracking case: the target's joints plus up to 0.1
 * rad) every method converges to the pose, without restarts (JT: to the position). */
static void track_poses(mn_model* m, int base, int tip, int ntargets, const char* what) {
    mn_data* d = mn_data_create(m, 0);
    double* q1 = malloc(sizeof(double) * (size_t)m->nq);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.use_orientation = 1;
    for (int t = 0; t < ntargets; t++) {
        mn_data_reset(m, d);
        for (int j = tip; j != base; j = m->jnt_parent[j]) {
            if (m->jnt_type[j] != MN_JOINT_HINGE) continue;
            double lo = m->jnt_limited[j] ? m->jnt_range[2 * j] : -MN_PI;
            double hi = m->jnt_limited[j] ? m->jnt_range[2 * j + 1] : MN_PI;
            d->q[m->jnt_qadr[j]] = lo + (hi - lo) * (0.1 + 0.8 * urand());
        }
        mn_fk(m, d);
        mn_xform B = base >= 0 ? d->xf[base] : mn_xform_identity();
        mn_xform Bi = mn_xform_inverse(&B);
        mn_xform T = mn_xform_mul(&Bi, &d->xf[tip]);
        p.target_pos = mn_xform_apply(&T, p.point);
        p.target_rot = mn_quat_from_mat3(&T.R);
        for (int j = tip; j != base; j = m->jnt_parent[j])
            if (m->jnt_type[j] == MN_JOINT_HINGE) d->q[m->jnt_qadr[j]] += 0.1 * (2 * urand() - 1);
        mn_clamp_to_limits(m, d->q);
        memcpy(q1, d->q, sizeof(double) * (size_t)m->nq);
        for (int k = 0; k < NNUMERIC; k++) {
            mn_ik_options o = opts_for(numeric[k]);
            o.max_restarts = 0;
            mn_ik_result r;
            memcpy(d->q, q1, sizeof(double) * (size_t)m->nq);
            /* Steepest descent (JT) converges linearly and can need 10^5+ iterations for a
             * 6-D goal near a singular pose: it gets the position goal here. */
            p.use_orientation = numeric[k] != MN_IK_JT;
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            if (s != MN_OK)
                fprintf(stderr, "%s track %d: %s: %s (%g, %g)\n", what, t,
                        mn_ik_method_name(numeric[k]), r.message, r.pos_err, r.rot_err);
            CHECK(s == MN_OK);
            check_pose(m, d, &p, 1.01e-5);
        }
    }
    free(q1);
    mn_data_destroy(d);
}

static void test_chain7_reach(void) {
    mn_model* m = chain7();
    reach_poses(m, mn_model_find_joint(m, "base"), mn_model_find_joint(m, "tool"), 20, "chain7");
    track_poses(m, mn_model_find_joint(m, "base"), mn_model_find_joint(m, "tool"), 10, "chain7");
    mn_model_destroy(m);
}

/* ---- limits, stiffness, determinism ------------------------------------------------------- */

/* Tight limits: the target is reachable only with every joint bent; all methods keep q
 * inside, and LM still reaches the target. */
static void test_limits(void) {
    mn_model* m = planar3(-0.9, 0.9);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = mn_model_find_joint(m, "base");
    p.tip = mn_model_find_joint(m, "tip");
    /* Reachable only with the elbows bent close to their limits: q = (0.6, 0.85, 0.85). */
    p.target_pos = mn_v3(cos(0.6) + cos(1.45) + cos(2.3), sin(0.6) + sin(1.45) + sin(2.3), 0);
    for (int k = 0; k < NNUMERIC; k++) {
        mn_data_reset(m, d);
        mn_ik_options o = opts_for(numeric[k]);
        mn_ik_result r;
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        for (int i = 0; i < 3; i++)
            CHECK(fabs(d->q[i]) <= 0.9 + 1e-12);
        if (numeric[k] == MN_IK_LM) CHECK(s == MN_OK);
        CHECK(mn_q_within_limits(m, d->q, 0));
    }
    /* Beyond what the limits allow: reach and direction are fine, bend is not. */
    p.target_pos = mn_v3(-1.0, 0.2, 0);
    for (int k = 0; k < NNUMERIC; k++) {
        mn_data_reset(m, d);
        mn_ik_options o = opts_for(numeric[k]);
        o.max_restarts = 10;
        mn_ik_result r;
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        CHECK(s != MN_OK);
        for (int i = 0; i < 3; i++)
            CHECK(fabs(d->q[i]) <= 0.9 + 1e-12);
        CHECK(isfinite(r.pos_err) && r.pos_err > 0.1);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* A hinge whose range spans a whole turn is not held at its limit: the pose repeats every
 * 2 pi, and LM takes it a turn back into its range. One unit link on a hinge limited to
 * [-pi, pi], seeded just below pi, target a little past pi: the short way is through the
 * limit. Without restarts (no way around by a random state) the solve must still meet it,
 * with the answer a turn back, within the limits. A range just short of a turn keeps its
 * limit as a barrier: the answer stays within it. */
static void test_wrap_whole_turn(void) {
    for (int turn = 1; turn >= 0; turn--) {
        double lim = turn ? MN_PI : MN_PI - 0.2;
        mn_spec* s = mn_spec_create("wrap1");
        int b = add(s, "base", -1, MN_JOINT_FIXED, mn_v3(0, 0, 0), mn_v3(0, 0, 1), 0, 0);
        int j = add(s, "j", b, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 0, 1), -lim, lim);
        add(s, "tip", j, MN_JOINT_FIXED, mn_v3(1, 0, 0), mn_v3(0, 0, 1), 0, 0);
        mn_model* m = mn_model_compile(s, NULL);
        mn_spec_destroy(s);
        CHECK(m != NULL);
        mn_data* d = mn_data_create(m, 0);
        mn_ik_problem p = mn_ik_problem_default();
        p.base = b;
        p.tip = mn_model_find_joint(m, "tip");
        double goal = MN_PI + 0.4; /* = -pi + 0.4 */
        p.target_pos = mn_v3(cos(goal), sin(goal), 0);
        mn_ik_options o = mn_ik_default();
        o.max_restarts = 0;
        d->q[m->jnt_qadr[j]] = lim - 0.05;
        mn_ik_result r;
        mn_status st = mn_ik_solve(m, d, &p, &o, &r);
        double q = d->q[m->jnt_qadr[j]];
        CHECK(q >= -lim && q <= lim);
        if (turn) {
            CHECK(st == MN_OK);
            CHECK(fabs(q - (-MN_PI + 0.4)) < 1e-4);
        }
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
}

/* A stiffer first joint moves less: same seed, same target, stiffness 1 then 50. */
static void test_stiffness(void) {
    for (int k = 0; k < NNUMERIC; k++) {
        double moved[2];
        for (int pass = 0; pass < 2; pass++) {
            mn_spec* s = mn_spec_create("stiff");
            int b = add(s, "base", -1, MN_JOINT_FIXED, mn_v3(0, 0, 0), mn_v3(0, 0, 1), 0, 0);
            int j1 = add(s, "j1", b, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_v3(0, 0, 1), 0, 0);
            int j2 = add(s, "j2", j1, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1), 0, 0);
            int j3 = add(s, "j3", j2, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_v3(0, 0, 1), 0, 0);
            add(s, "tip", j3, MN_JOINT_FIXED, mn_v3(1, 0, 0), mn_v3(0, 0, 1), 0, 0);
            mn_spec_joint(s, j1)->stiffness = pass == 0 ? 1.0 : 50.0;
            mn_model* m = mn_model_compile(s, NULL);
            mn_spec_destroy(s);
            mn_data* d = mn_data_create(m, 0);
            d->q[0] = 0.2, d->q[1] = 0.5, d->q[2] = 0.5;
            mn_ik_problem p = mn_ik_problem_default();
            p.base = 0;
            p.tip = mn_model_find_joint(m, "tip");
            p.target_pos = mn_v3(1.2, 1.6, 0);
            mn_ik_options o = opts_for(numeric[k]);
            o.max_restarts = 0;
            mn_ik_result r;
            CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_OK);
            moved[pass] = fabs(d->q[0] - 0.2);
            mn_data_destroy(d);
            mn_model_destroy(m);
        }
        if (!(moved[1] < 0.5 * moved[0]))
            fprintf(stderr, "stiffness %s: joint 1 moved %g then %g\n",
                    mn_ik_method_name(numeric[k]), moved[0], moved[1]);
        CHECK(moved[1] < 0.5 * moved[0]);
    }
}

/* The same seed gives bit-identical answers; restarts are used on this problem. */
static void test_determinism(void) {
    mn_model* m = chain7();
    mn_data* d = mn_data_create(m, 0);
    int base = mn_model_find_joint(m, "base"), tip = mn_model_find_joint(m, "tool");
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.use_orientation = 1;
    double* q[2];
    int used_restarts = 0;
    for (int t = 0; t < 10; t++) {
        random_target(m, d, base, tip, &p);
        for (int pass = 0; pass < 2; pass++) {
            mn_data_reset(m, d);
            mn_ik_options o = mn_ik_default();
            o.seed = 1234;
            o.max_iters = 8; /* short starts so restarts happen */
            mn_ik_result r;
            mn_ik_solve(m, d, &p, &o, &r);
            used_restarts += r.restarts;
            q[pass] = malloc(sizeof(double) * (size_t)m->nq);
            memcpy(q[pass], d->q, sizeof(double) * (size_t)m->nq);
        }
        CHECK(memcmp(q[0], q[1], sizeof(double) * (size_t)m->nq) == 0);
        free(q[0]);
        free(q[1]);
    }
    CHECK(used_restarts > 0);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* PINV's null-space term (Parent eq. 5.27-5.28) pulls joints towards the middle of their
 * ranges without giving up the goal: the answer is as exact, and nearer mid-range. */
static double midrange_cost(const mn_model* m, const double* q) {
    double h = 0;
    for (int j = 0; j < m->njoint; j++) {
        if (m->jnt_type[j] != MN_JOINT_HINGE || !m->jnt_limited[j]) continue;
        double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1], x = q[m->jnt_qadr[j]];
        h += ((x - 0.5 * (lo + hi)) / (hi - lo)) * ((x - 0.5 * (lo + hi)) / (hi - lo));
    }
    return h;
}

static void test_pinv_nullspace(void) {
    mn_model* m = chain7();
    mn_data* d = mn_data_create(m, 0);
    int base = mn_model_find_joint(m, "base"), tip = mn_model_find_joint(m, "tool");
    mn_ik_problem p = mn_ik_problem_default(); /* position only: 4 redundant DOFs */
    p.base = base;
    p.tip = tip;
    int better = 0, compared = 0;
    for (int t = 0; t < 12; t++) {
        random_target(m, d, base, tip, &p);
        double h[2];
        int solved = 1;
        for (int ns = 0; ns < 2; ns++) {
            mn_data_reset(m, d);
            for (int i = 0; i < m->nq; i++)
                d->q[i] = (i % 2 ? 1.2 : -1.5); /* far from mid-range */
            mn_ik_options o = mn_ik_default();
            o.method = MN_IK_PINV;
            o.max_iters = 500;
            o.nullspace = ns;
            o.nullspace_gain = 0.5;
            mn_ik_result r;
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            /* From this far seed plain PINV can end in a local minimum at a limit: those
             * targets say nothing about the null-space term. With it, the goal is met
             * whenever it is met without. */
            if (ns == 0 && s != MN_OK) {
                solved = 0;
                break;
            }
            if (s != MN_OK)
                fprintf(stderr, "nullspace target %d: %s (%g)\n", t, r.message, r.pos_err);
            CHECK(s == MN_OK);
            check_pose(m, d, &p, 1.01e-5);
            h[ns] = midrange_cost(m, d->q);
        }
        if (!solved) continue;
        compared++;
        better += h[1] < h[0];
    }
    CHECK(compared >= 8);
    CHECK(better >= compared - 1);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Per-joint desired angles and gains (Parent eq. 5.27, mn_ik_solve_nullspace): with every
 * hinge asked for c_k = +-0.4 (weight 1, one joint weighted 10), the solved poses lie nearer
 * those angles than with the mid-range term, the goal met all the same; bad weights and
 * targets are refused with d->q untouched. */
static double target_cost(const mn_model* m, const double* q, const double* c, const double* w) {
    double h = 0;
    for (int j = 0; j < m->njoint; j++) {
        if (m->jnt_type[j] != MN_JOINT_HINGE) continue;
        int k = m->jnt_dofadr[j];
        double e = q[m->jnt_qadr[j]] - c[k];
        h += w[k] * e * e;
    }
    return h;
}

static void test_pinv_nullspace_targets(void) {
    mn_model* m = chain7();
    mn_data* d = mn_data_create(m, 0);
    int base = mn_model_find_joint(m, "base"), tip = mn_model_find_joint(m, "tool");
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    double* c = malloc(sizeof(double) * (size_t)m->nv);
    double* w = malloc(sizeof(double) * (size_t)m->nv);
    for (int k = 0; k < m->nv; k++)
        c[k] = k % 2 ? 0.4 : -0.4, w[k] = k == 2 ? 10 : 1;
    mn_ik_nullspace ns = {c, w};
    int better = 0, compared = 0;
    for (int t = 0; t < 12; t++) {
        random_target(m, d, base, tip, &p);
        double h[2];
        int solved = 1;
        for (int with = 0; with < 2 && solved; with++) {
            mn_data_reset(m, d);
            mn_ik_options o = mn_ik_default();
            o.method = MN_IK_PINV;
            o.max_iters = 500;
            o.nullspace = 1;
            o.nullspace_gain = 0.5;
            mn_ik_result r;
            mn_status s = mn_ik_solve_nullspace(m, d, &p, &o, with ? &ns : NULL, &r);
            if (with == 0 && s != MN_OK) solved = 0;
            if (!solved) break;
            CHECK(s == MN_OK);
            check_pose(m, d, &p, 1.01e-5);
            h[with] = target_cost(m, d->q, c, w);
        }
        if (!solved) continue;
        compared++;
        better += h[1] < h[0];
    }
    CHECK(compared >= 8);
    CHECK(better >= compared - 1);
    /* bad input */
    mn_ik_options o = mn_ik_default();
    o.method = MN_IK_PINV;
    o.nullspace = 1;
    mn_ik_result r;
    w[1] = -1;
    memcpy(d->q, m->q0, sizeof(double) * (size_t)m->nq);
    CHECK(mn_ik_solve_nullspace(m, d, &p, &o, &ns, &r) == MN_ERR_ARG &&
          strstr(r.message, "weight"));
    w[1] = 1, c[3] = INFINITY;
    CHECK(mn_ik_solve_nullspace(m, d, &p, &o, &ns, &r) == MN_ERR_ARG &&
          strstr(r.message, "target"));
    CHECK(!memcmp(d->q, m->q0, sizeof(double) * (size_t)m->nq));
    free(c);
    free(w);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Welman 4.1.4: the transpose's response must not depend on the scale of the world. The
 * same 7-DOF chain at 1 mm and at 1 km (every offset scaled), the same seed and the same
 * target scaled alike: K_i = 1 / (w_i phi_i) with the world-scale part w taken over by the
 * adaptive step, the joint paths agree, iteration for iteration. */
static void jt_scale_invariant(int rk) {
    mn_model* m = chain7();
    double scales[2] = {1e-3, 1e3};
    mn_model* ms[2];
    for (int k = 0; k < 2; k++) {
        mn_spec* sp = mn_model_decompile(m);
        for (int j = 0; j < mn_spec_joint_count(sp); j++) {
            mn_joint_def* jd = mn_spec_joint(sp, j);
            jd->offset = mn_vec3_scale(jd->offset, scales[k]);
        }
        ms[k] = mn_model_compile(sp, NULL);
        mn_spec_destroy(sp);
    }
    int base = mn_model_find_joint(m, "base"), tip = mn_model_find_joint(m, "tool");
    mn_data* d = mn_data_create(m, 0);
    double worst = 0;
    for (int t = 0; t < 6; t++) {
        mn_ik_problem p = mn_ik_problem_default();
        p.base = base, p.tip = tip;
        random_target(m, d, base, tip, &p);
        double* q[2];
        int iters[2];
        for (int k = 0; k < 2; k++) {
            mn_data* dk = mn_data_create(ms[k], 0);
            mn_ik_problem pk = p;
            pk.target_pos = mn_vec3_scale(p.target_pos, scales[k]);
            mn_ik_options o = mn_ik_default();
            o.method = MN_IK_JT;
            o.jt_rk = rk;
            o.max_iters = 50; /* a fixed budget: the paths, not the answers, are compared */
            o.max_restarts = 0;
            o.tol_pos = 1e-12 * scales[k];
            mn_ik_result r;
            mn_ik_solve(ms[k], dk, &pk, &o, &r);
            iters[k] = r.iterations;
            q[k] = malloc(sizeof(double) * (size_t)m->nq);
            memcpy(q[k], dk->q, sizeof(double) * (size_t)m->nq);
            mn_data_destroy(dk);
        }
        CHECK(iters[0] == iters[1]);
        for (int k = 0; k < m->nq; k++)
            worst = fmax(worst, fabs(q[0][k] - q[1][k]));
        free(q[0]);
        free(q[1]);
    }
    CHECK(worst < 1e-6);
    if (!(worst < 1e-6)) fprintf(stderr, "  jt (rk %d) at 1 mm and 1 km: %g apart\n", rk, worst);
    mn_data_destroy(d);
    mn_model_destroy(ms[0]);
    mn_model_destroy(ms[1]);
    mn_model_destroy(m);
}

static void test_jt_scale_invariant(void) {
    jt_scale_invariant(0);
    jt_scale_invariant(1); /* the Runge-Kutta step control is relative too */
}

/* The transpose's ODE on planar3 (unit links, hinges about z): q' = J^T (G - E), the
 * right-hand side written out here independently of the library. */
static void planar3_flow(const double* q, mn_vec3 G, double* f) {
    double phi = 0, ex = 0, ey = 0, cx[3], cy[3];
    for (int i = 0; i < 3; i++) {
        phi += q[i];
        ex += cos(phi), ey += sin(phi);
        cx[i] = cos(phi), cy[i] = sin(phi);
    }
    double gx = G.x - ex, gy = G.y - ey;
    for (int i = 0; i < 3; i++) {
        double jx = 0, jy = 0; /* d E / d q_i = sum over links k >= i of (-sin, cos) */
        for (int k = i; k < 3; k++)
            jx -= cy[k], jy += cx[k];
        f[i] = jx * gx + jy * gy;
    }
}

/* Distance in joint space from q to the flow's path from q0, integrated by classical RK4
 * with a small fixed step until it comes to rest. */
static double distance_to_flow(const double* q0, mn_vec3 G, const double* q) {
    double y[3] = {q0[0], q0[1], q0[2]}, best = INFINITY;
    const double h = 2e-4;
    for (int it = 0; it < 400000; it++) {
        double dist = 0;
        for (int i = 0; i < 3; i++)
            dist += (y[i] - q[i]) * (y[i] - q[i]);
        best = fmin(best, sqrt(dist));
        double k1[3], k2[3], k3[3], k4[3], t[3];
        planar3_flow(y, G, k1);
        for (int i = 0; i < 3; i++)
            t[i] = y[i] + 0.5 * h * k1[i];
        planar3_flow(t, G, k2);
        for (int i = 0; i < 3; i++)
            t[i] = y[i] + 0.5 * h * k2[i];
        planar3_flow(t, G, k3);
        for (int i = 0; i < 3; i++)
            t[i] = y[i] + h * k3[i];
        planar3_flow(t, G, k4);
        double speed = 0;
        for (int i = 0; i < 3; i++) {
            y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
            speed += k1[i] * k1[i];
        }
        if (speed < 1e-16) break;
    }
    return best;
}

/* JT with the adaptive Runge-Kutta integration of its ODE (Welman 4.1.5, o.jt_rk): each
 * iteration is a step along the flow q' = K J^T F, so the iterates lie on the path a fine
 * integration of the same ODE takes (to the step control's tolerance), where the
 * line-searched steps (straight segments of the linearised optimum) leave it; the targets
 * of the planar arm and of the 7-DOF chain are met (position goals: steepest descent
 * converges linearly), within tight limits, the unreachable target stretched towards, and
 * nothing allocated. */
static void test_jt_rk(void) {
    mn_model* m = planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = mn_model_find_joint(m, "base");
    p.tip = mn_model_find_joint(m, "tip");
    mn_vec3 targets[4] = {mn_v3(2, 1, 0), mn_v3(-1, 1.5, 0), mn_v3(0.5, -2.2, 0),
                          mn_v3(1.2, 0.3, 0)};
    const double q0[3] = {0.3, 0.4, 0.5};
    double off_path[2] = {0, 0};
    for (int rk = 0; rk < 2; rk++)
        for (int t = 0; t < 4; t++) {
            mn_ik_options o = opts_for(MN_IK_JT);
            o.jt_rk = rk;
            o.max_restarts = 0;
            mn_ik_result r;
            p.target_pos = targets[t];
            for (int k = 1; k <= 3; k++) { /* the first iterates */
                memcpy(d->q, q0, sizeof q0);
                o.max_iters = k;
                mn_ik_solve(m, d, &p, &o, &r);
                off_path[rk] = fmax(off_path[rk], distance_to_flow(q0, targets[t], d->q));
            }
            memcpy(d->q, q0, sizeof q0);
            o.max_iters = opts_for(MN_IK_JT).max_iters;
            mn_status s = mn_ik_solve(m, d, &p, &o, &r);
            if (s != MN_OK) fprintf(stderr, "jt rk %d target %d: %s\n", rk, t, r.message);
            CHECK(s == MN_OK);
            check_pose(m, d, &p, 1.01e-5);
        }
    if (getenv("MN_TEST_VERBOSE") || !(off_path[1] < 0.01 && off_path[0] > 10 * off_path[1]))
        fprintf(stderr, "  jt's first iterates off the flow's path: %g (line search), %g (rk)\n",
                off_path[0], off_path[1]);
    CHECK(off_path[1] < 0.01);
    CHECK(off_path[0] > 10 * off_path[1]);
    /* out of reach: stretched towards it */
    mn_data_reset(m, d);
    d->q[0] = 0.1, d->q[1] = 0.3, d->q[2] = -0.2;
    p.target_pos = mn_v3(3, 4, 0);
    mn_ik_options o = opts_for(MN_IK_JT);
    o.jt_rk = 1;
    mn_ik_result r;
    CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_ERR_UNREACHABLE);
    CHECK_NEAR(r.pos_err, 2.0, 1e-3);
    mn_data_destroy(d);
    mn_model_destroy(m);

    /* tight limits: q stays inside */
    m = planar3(-0.9, 0.9);
    d = mn_data_create(m, 0);
    p.target_pos = mn_v3(cos(0.6) + cos(1.45) + cos(2.3), sin(0.6) + sin(1.45) + sin(2.3), 0);
    mn_ik_solve(m, d, &p, &o, &r);
    CHECK(mn_q_within_limits(m, d->q, 0));
    mn_data_destroy(d);
    mn_model_destroy(m);

    m = chain7();
    d = mn_data_create(m, 0);
    int base = mn_model_find_joint(m, "base"), tip = mn_model_find_joint(m, "tool");
    p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    for (int t = 0; t < 5; t++) {
        random_target(m, d, base, tip, &p);
        mn_data_reset(m, d);
        o = opts_for(MN_IK_JT);
        o.jt_rk = 1;
        long before = mn_alloc_count();
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        CHECK(mn_alloc_count() == before);
        if (s != MN_OK) fprintf(stderr, "jt rk chain7 target %d: %s\n", t, r.message);
        CHECK(s == MN_OK);
        check_pose(m, d, &p, 1.01e-5);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* ---- singular and unreachable --------------------------------------------------------------- */

/* Welman Fig. 4.2: a straight chain with the target on its line, pulled inwards. The
 * force on the tip points down the singular direction; DLS and LM must still fold it. */
static void test_singular_inward(void) {
    mn_model* m = planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = mn_model_find_joint(m, "base");
    p.tip = mn_model_find_joint(m, "tip");
    p.target_pos = mn_v3(1.5, 0, 0);
    const mn_ik_method must[2] = {MN_IK_DLS, MN_IK_LM};
    for (int k = 0; k < 2; k++) {
        mn_data_reset(m, d); /* q = 0: exactly straight along x */
        mn_ik_options o = opts_for(must[k]);
        mn_ik_result r;
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        if (s != MN_OK) fprintf(stderr, "fig 4.2 %s: %s\n", mn_ik_method_name(must[k]), r.message);
        CHECK(s == MN_OK);
        check_pose(m, d, &p, 1.01e-5);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Out of reach: UNREACHABLE, the arm stretched towards the target, the residual reported. */
static void test_unreachable(void) {
    mn_model* m = planar3(0, 0);
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = mn_model_find_joint(m, "base");
    p.tip = mn_model_find_joint(m, "tip");
    p.target_pos = mn_v3(3, 4, 0); /* 5 away, reach 3 */
    for (int k = 0; k < NNUMERIC; k++) {
        mn_data_reset(m, d);
        d->q[0] = 0.1, d->q[1] = 0.3, d->q[2] = -0.2;
        mn_ik_options o = opts_for(numeric[k]);
        mn_ik_result r;
        mn_status s = mn_ik_solve(m, d, &p, &o, &r);
        if (s != MN_ERR_UNREACHABLE)
            fprintf(stderr, "unreachable %s: %s\n", mn_ik_method_name(numeric[k]), r.message);
        CHECK(s == MN_ERR_UNREACHABLE);
        CHECK(r.message[0] != 0);
        for (int i = 0; i < m->nq; i++)
            CHECK(isfinite(d->q[i]));
        mn_vec3 tip = d->xf[p.tip].p;
        CHECK_NEAR(mn_vec3_norm(tip), 3.0, 1e-3); /* stretched */
        CHECK_NEAR(mn_vec3_dot(mn_vec3_normalize(tip), mn_v3(0.6, 0.8, 0)), 1.0,
                   1e-6); /* towards it */
        CHECK_NEAR(r.pos_err, 2.0, 1e-3);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* ---- no heap allocation inside a solve ------------------------------------------------------ */

static void test_no_allocation(void) {
    mn_model* m = chain7();
    mn_data* d = mn_data_create(m, 0);
    int base = mn_model_find_joint(m, "base"), tip = mn_model_find_joint(m, "tool");
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.use_orientation = 1;
    random_target(m, d, base, tip, &p);
    for (int k = 0; k < NNUMERIC; k++) {
        mn_data_reset(m, d);
        mn_ik_options o = opts_for(numeric[k]);
        o.max_iters = k == 3 ? 2000 : 100;
        o.timeout_ms = 50;
        mn_ik_result r;
        long before = mn_alloc_count();
        mn_ik_solve(m, d, &p, &o, &r);
        CHECK(mn_alloc_count() == before);
        CHECK(r.iterations > 0);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* ---- Jacobians against finite differences -------------------------------------------------- */

static void check_jacobians(mn_model* m, int base, int tip, mn_vec3 point) {
    mn_data* d = mn_data_create(m, 0);
    int nd = mn_chain_dofs(m, base, tip, NULL, 0);
    CHECK(nd > 0);
    int* dofs = malloc(sizeof(int) * (size_t)nd);
    mn_chain_dofs(m, base, tip, dofs, nd);
    double* Jm = malloc(sizeof(double) * 6 * (size_t)nd);
    double* Jc = malloc(sizeof(double) * 6 * (size_t)nd);
    for (int trial = 0; trial < 5; trial++) {
        for (int j = 0; j < m->njoint; j++)
            if (m->jnt_type[j] == MN_JOINT_HINGE) d->q[m->jnt_qadr[j]] = 2 * urand() - 1;
        mn_fk(m, d);
        /* model.h's chain Jacobian: world coordinates. */
        mn_jacobian_chain(m, d, base, tip, point, Jm);
        /* ik_common's Jacobian, base frame, unweighted rows. */
        mn_ikc c;
        size_t mark = mn_arena_mark(&d->arena);
        CHECK(mn_ikc_build(m, d, base, tip, point, 0, &d->arena, &c) == MN_OK);
        double* qc = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)c.ch.nq);
        mn_chain_gather(&c.ch, d->q, qc);
        mn_ik_problem p = mn_ik_problem_default();
        p.use_orientation = 1;
        p.point = point;
        p.w_rot = 1.0 / (c.reach > 0 ? c.reach : 1.0);
        mn_ik_goal g = mn_ik_goal_make(&p, &c);
        mn_xform T;
        mn_vec3 pt;
        mn_ikc_fk(&c, qc, point, &T, &pt);
        mn_ikc_jacobian(&c, &g, pt, Jc);
        /* FK of the chain agrees with mn_fk. */
        mn_xform B = base >= 0 ? d->xf[base] : mn_xform_identity();
        mn_vec3 pw = mn_xform_apply(&B, pt);
        CHECK(mn_vec3_dist(pw, mn_point_world(d, tip, point)) < 1e-12);
        /* Finite differences of the world point and frame. */
        const double h = 1e-6;
        for (int k = 0; k < nd; k++) {
            int qa = m->jnt_qadr[m->dof_jnt[dofs[k]]];
            double q0 = d->q[qa];
            d->q[qa] = q0 + h;
            mn_fk(m, d);
            mn_vec3 pp = mn_point_world(d, tip, point);
            mn_mat3 Rp = d->xf[tip].R;
            d->q[qa] = q0 - h;
            mn_fk(m, d);
            mn_vec3 pm = mn_point_world(d, tip, point);
            mn_mat3 Rm = d->xf[tip].R;
            d->q[qa] = q0;
            mn_vec3 v = mn_vec3_scale(mn_vec3_sub(pp, pm), 0.5 / h);
            mn_vec3 w = mn_vec3_scale(mn_rotation_error(&Rp, &Rm), 0.5 / h);
            double fd[6] = {v.x, v.y, v.z, w.x, w.y, w.z};
            for (int r = 0; r < 6; r++)
                CHECK_NEAR(Jm[r * nd + k], fd[r], 1e-6);
            /* ik_common's columns are in the base frame: rotate them to world. */
            mn_vec3 lin = mn_mat3_mulv(&B.R, mn_v3(Jc[k], Jc[nd + k], Jc[2 * nd + k]));
            mn_vec3 ang = mn_mat3_mulv(&B.R, mn_v3(Jc[3 * nd + k], Jc[4 * nd + k], Jc[5 * nd + k]));
            CHECK_NEAR(lin.x, v.x, 1e-6);
            CHECK_NEAR(lin.y, v.y, 1e-6);
            CHECK_NEAR(lin.z, v.z, 1e-6);
            CHECK_NEAR(ang.x, w.x, 1e-6);
            CHECK_NEAR(ang.y, w.y, 1e-6);
            CHECK_NEAR(ang.z, w.z, 1e-6);
        }
        mn_fk(m, d);
        mn_arena_reset(&d->arena, mark);
    }
    free(Jm);
    free(Jc);
    free(dofs);
    mn_data_destroy(d);
}

/* The alternative Jacobian (Parent ch. 5) is the Jacobian of the goal carried rigidly by the
 * tip frame: central differences of that point's base-frame position, the goal away from the
 * effector, on hinge chains and a chain of ball joints; its rotation rows are the ordinary
 * Jacobian's. */
static void check_altjac_jacobian(mn_model* m, int base, int tip, mn_vec3 point) {
    mn_data* d = mn_data_create(m, 0);
    for (int trial = 0; trial < 5; trial++) {
        for (int j = 0; j < m->njoint; j++) {
            int qa = m->jnt_qadr[j];
            if (m->jnt_type[j] == MN_JOINT_HINGE) d->q[qa] = 2 * urand() - 1;
            if (m->jnt_type[j] == MN_JOINT_BALL) {
                mn_quat r = mn_quat_axis_angle(
                    mn_vec3_normalize(mn_v3(urand() - 0.5, urand() - 0.5, urand() - 0.5)),
                    2 * urand() - 1);
                d->q[qa] = r.w, d->q[qa + 1] = r.x, d->q[qa + 2] = r.y, d->q[qa + 3] = r.z;
            }
        }
        mn_fk(m, d);
        size_t mark = mn_arena_mark(&d->arena);
        mn_ikc c;
        CHECK(mn_ikc_build(m, d, base, tip, point, 0, &d->arena, &c) == MN_OK);
        int n = c.ch.ndof, nq = c.ch.nq;
        double* qc = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)nq);
        double* qh = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)nq);
        double* v = mn_arena_alloc(&d->arena, sizeof(double) * (size_t)n);
        double* Ja = mn_arena_alloc(&d->arena, sizeof(double) * 6 * (size_t)n);
        double* Je = mn_arena_alloc(&d->arena, sizeof(double) * 6 * (size_t)n);
        mn_chain_gather(&c.ch, d->q, qc);
        mn_ik_problem p = mn_ik_problem_default();
        p.use_orientation = 1;
        p.point = point;
        p.w_pos = 0.7; /* the weights scale the rows as in the ordinary Jacobian */
        p.target_pos = mn_v3(2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1);
        mn_ik_goal g = mn_ik_goal_make(&p, &c);
        mn_xform T;
        mn_vec3 pt;
        mn_ikc_fk(&c, qc, point, &T, &pt);
        CHECK(mn_vec3_dist(pt, g.pos) > 0.1); /* the goal is not the effector */
        mn_ikc_jacobian(&c, &g, pt, Je);
        mn_ik_altjac_jacobian(&c, &g, Ja);
        mn_xform Ti = mn_xform_inverse(&T);
        mn_vec3 gl = mn_xform_apply(&Ti, g.pos); /* the goal in the tip frame */
        const double h = 1e-6;
        double differ = 0;
        for (int k = 0; k < n; k++) {
            /* central differences along DOF k (a ball's: a turn about its k-th axis) */
            mn_vec3 pp, pm;
            for (int i = 0; i < n; i++)
                v[i] = i == k;
            memcpy(qh, qc, sizeof(double) * (size_t)nq);
            mn_ikc_integrate(&c, qh, v, h);
            mn_ikc_fk(&c, qh, gl, NULL, &pp);
            memcpy(qh, qc, sizeof(double) * (size_t)nq);
            mn_ikc_integrate(&c, qh, v, -h);
            mn_ikc_fk(&c, qh, gl, NULL, &pm);
            mn_vec3 dv = mn_vec3_scale(mn_vec3_sub(pp, pm), 0.5 / h);
            CHECK_NEAR(Ja[k], g.wp * dv.x, 1e-6);
            CHECK_NEAR(Ja[n + k], g.wp * dv.y, 1e-6);
            CHECK_NEAR(Ja[2 * n + k], g.wp * dv.z, 1e-6);
            for (int r = 3; r < 6; r++)
                CHECK(Ja[r * n + k] == Je[r * n + k]);
            for (int r = 0; r < 3; r++)
                differ = fmax(differ, fabs(Ja[r * n + k] - Je[r * n + k]));
        }
        CHECK(differ > 1e-3); /* not the end effector's Jacobian */
        mn_arena_reset(&d->arena, mark);
    }
    mn_data_destroy(d);
}

/* Three ball joints on links of 0.4, 0.3 and 0.25 (a limb of a motion-capture figure). */
static mn_model* balls3(void) {
    mn_spec* s = mn_spec_create("balls3");
    int p = add(s, "base", -1, MN_JOINT_FIXED, mn_v3(0, 0, 0), mn_v3(0, 0, 1), 0, 0);
    const char* names[3] = {"b1", "b2", "b3"};
    const double len[3] = {0, 0.4, 0.3};
    for (int i = 0; i < 3; i++)
        p = add(s, names[i], p, MN_JOINT_BALL, mn_v3(0.05 * i, -len[i], 0), mn_v3(0, 0, 1), 0, 0);
    add(s, "end", p, MN_JOINT_FIXED, mn_v3(0, -0.25, 0.02), mn_v3(0, 0, 1), 0, 0);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

static void test_altjac_jacobian(void) {
    mn_model* m = planar3(0, 0);
    check_altjac_jacobian(m, mn_model_find_joint(m, "base"), mn_model_find_joint(m, "tip"),
                          mn_v3(0.1, 0.2, 0.3));
    mn_model_destroy(m);
    m = chain7();
    check_altjac_jacobian(m, mn_model_find_joint(m, "base"), mn_model_find_joint(m, "tool"),
                          mn_v3(0.02, -0.03, 0.1));
    mn_model_destroy(m);
    m = balls3();
    check_altjac_jacobian(m, mn_model_find_joint(m, "base"), mn_model_find_joint(m, "end"),
                          mn_v3(0.01, 0, 0.03));
    /* and the method meets pose targets on the ball chain, from its rest pose */
    mn_data* d = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = mn_model_find_joint(m, "base");
    p.tip = mn_model_find_joint(m, "end");
    p.use_orientation = 1;
    for (int t = 0; t < 5; t++) {
        for (int j = 0; j < m->njoint; j++)
            if (m->jnt_type[j] == MN_JOINT_BALL) {
                int qa = m->jnt_qadr[j];
                mn_quat r = mn_quat_axis_angle(
                    mn_vec3_normalize(mn_v3(urand() - 0.5, urand() - 0.5, urand() - 0.5)),
                    1.2 * urand());
                d->q[qa] = r.w, d->q[qa + 1] = r.x, d->q[qa + 2] = r.y, d->q[qa + 3] = r.z;
            }
        mn_fk(m, d);
        p.target_pos = d->xf[p.tip].p;
        p.target_rot = mn_quat_from_mat3(&d->xf[p.tip].R);
        mn_data_reset(m, d);
        mn_ik_options o = opts_for(MN_IK_ALTJAC);
        mn_ik_result r;
        mn_status st = mn_ik_solve(m, d, &p, &o, &r);
        if (st != MN_OK) fprintf(stderr, "altjac balls target %d: %s\n", t, r.message);
        CHECK(st == MN_OK);
        check_pose(m, d, &p, 1.01e-5);
    }
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_jacobians(void) {
    mn_model* m = planar3(0, 0);
    check_jacobians(m, mn_model_find_joint(m, "base"), mn_model_find_joint(m, "tip"),
                    mn_v3(0.1, 0.2, 0.3));
    mn_model_destroy(m);
    m = chain7();
    check_jacobians(m, mn_model_find_joint(m, "base"), mn_model_find_joint(m, "tool"),
                    mn_v3(0.02, -0.03, 0.1));
    check_jacobians(m, mn_model_find_joint(m, "a2"), mn_model_find_joint(m, "tool"),
                    mn_v3(0, 0, 0));
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_jacobians);
    RUN(test_altjac_jacobian);
    RUN(test_planar_reach);
    RUN(test_chain7_reach);
    RUN(test_limits);
    RUN(test_wrap_whole_turn);
    RUN(test_stiffness);
    RUN(test_determinism);
    RUN(test_pinv_nullspace);
    RUN(test_pinv_nullspace_targets);
    RUN(test_jt_scale_invariant);
    RUN(test_jt_rk);
    RUN(test_singular_inward);
    RUN(test_unreachable);
    RUN(test_no_allocation);
    return mn_test_report();
}
