/* Held DOFs (model.h, MN_LOCK_*) on BVH rigs with position channels on every joint: the
 * position channels below the root are the take's bone lengths, and no solver may stretch
 * them unless told to free them. Figures: tests/data/cmu_02_01_walk_positions.bvh (the CMU
 * walk with Xposition Yposition Zposition added to every joint, valued at the OFFSETs: FREE
 * joints below the root) and a small arm whose position channels follow its rotations (a
 * series of SLIDE and HINGE joints). */
#include <marionette/constrain.h>
#include <marionette/ik.h>
#include <marionette/io.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

/* Beyond reach: the ratio of the example, a 65 cm arm and a target 150 cm away. */
#define FAR 2.3
#define WALK MN_TEST_DATA "/cmu_02_01_walk_positions.bvh"

/* Rotations listed before positions: each joint becomes 3 SLIDEs then 3 HINGEs. */
static const char* const SERIES_ARM =
    "HIERARCHY\n"
    "ROOT Shoulder\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation "
    "Xrotation Yrotation\n"
    "  JOINT Arm\n  {\n    OFFSET 0 0 0\n    CHANNELS 6 Zrotation Xrotation Yrotation Xposition "
    "Yposition Zposition\n"
    "    JOINT Forearm\n    {\n      OFFSET 0.3 0 0\n      CHANNELS 6 Zrotation Xrotation "
    "Yrotation Xposition Yposition Zposition\n"
    "      JOINT Hand\n      {\n        OFFSET 0.27 0 0\n        CHANNELS 6 Zrotation Xrotation "
    "Yrotation Xposition Yposition Zposition\n"
    "        End Site\n        {\n          OFFSET 0.08 0 0\n        }\n      }\n    }\n  }\n}\n"
    "MOTION\nFrames: 1\nFrame Time: 0.01\n"
    "0 0 0 0 0 0  0 0 0 0 0 0  0 20 0 0.3 0 0  0 0 0 0.27 0 0\n";

static mn_model* read_bvh(const char* path, mn_motion* mo) {
    mn_model* m = NULL;
    mn_error err;
    mn_bvh_options opt = mn_bvh_default();
    mn_status st = mn_bvh_read(path, &opt, &m, mo, NULL, &err);
    CHECK(st == MN_OK);
    if (st != MN_OK) fprintf(stderr, "%s\n", err.message);
    return m;
}

static mn_model* read_series(mn_motion* mo) {
    const char* path = mn_test_write_temp(".bvh", SERIES_ARM, strlen(SERIES_ARM));
    CHECK(path != NULL);
    return path ? read_bvh(path, mo) : NULL;
}

/* Largest difference between a joint's distance from its parent and its rest offset plus
 * the held translation it started with (lens0, from the same figure before the solve). */
static void bone_lengths(const mn_model* m, const mn_data* d, double* len) {
    for (int j = 0; j < m->njoint; j++) {
        int p = m->jnt_parent[j];
        len[j] = p < 0 ? 0 : mn_vec3_dist(d->xf[j].p, d->xf[p].p);
    }
}
static double max_len_change(const mn_model* m, const double* a, const double* b) {
    double mx = 0;
    for (int j = 0; j < m->njoint; j++)
        mx = fmax(mx, fabs(a[j] - b[j]));
    return mx;
}
/* Largest change of a held DOF's state numbers between two states (exact comparison). */
static double max_held_change(const mn_model* m, const double* q1, const double* q0) {
    double mx = 0;
    for (int j = 0; j < m->njoint; j++) {
        int t = m->jnt_type[j];
        if (!m->jnt_locked[j]) continue;
        int n = t == MN_JOINT_FREE ? 3 : mn_joint_type_nq((mn_joint_type)t); /* held position */
        for (int k = 0; k < n; k++)
            mx = fmax(mx, fabs(q1[m->jnt_qadr[j] + k] - q0[m->jnt_qadr[j] + k]));
    }
    return mx;
}
/* Length of the path from joint a (exclusive) down to joint b, at rest. */
static double path_length(const mn_model* m, const mn_data* d, int a, int b) {
    double L = 0;
    for (int j = b; j != a; j = m->jnt_parent[j])
        L += mn_vec3_dist(d->xf[j].p, d->xf[m->jnt_parent[j]].p);
    return L;
}

static void test_bvh_holds_positions_below_root(void) {
    mn_motion mo;
    mn_model* m = read_bvh(WALK, &mo);
    if (!m) return;
    int hips = mn_model_find_joint(m, "Hips"), arm = mn_model_find_joint(m, "LeftArm");
    CHECK(hips == 0 && arm > 0);
    CHECK(m->jnt_type[hips] == MN_JOINT_FREE && m->jnt_locked[hips] == MN_LOCK_NONE);
    CHECK(m->jnt_type[arm] == MN_JOINT_FREE && m->jnt_locked[arm] == MN_LOCK_TRANSLATION);
    int nfree = 0;
    for (int j = 1; j < m->njoint; j++)
        nfree += m->jnt_type[j] == MN_JOINT_FREE;
    CHECK(m->nlocked == 3 * nfree && nfree == 30);
    for (int k = 0; k < 6; k++) {
        CHECK(m->dof_locked[m->jnt_dofadr[arm] + k] == (k < 3));
        CHECK(m->dof_locked[m->jnt_dofadr[hips] + k] == 0);
    }
    /* the held state survives decompile and compile */
    mn_spec* s = mn_model_decompile(m);
    mn_model* m2 = mn_model_compile(s, NULL);
    CHECK(m2 && m2->nlocked == m->nlocked && m2->jnt_locked[arm] == MN_LOCK_TRANSLATION);
    mn_model_destroy(m2);
    mn_spec_destroy(s);
    mn_motion_free(&mo);
    mn_model_destroy(m);

    m = read_series(&mo);
    if (!m) return;
    int fs = mn_model_find_joint(m, "Forearm:3:Xposition");
    int sh = mn_model_find_joint(m, "Shoulder");
    CHECK(fs > 0 && m->jnt_type[fs] == MN_JOINT_SLIDE && m->jnt_locked[fs] == MN_LOCK_TRANSLATION);
    CHECK(sh == 0 && m->jnt_type[sh] == MN_JOINT_FREE && m->jnt_locked[sh] == MN_LOCK_NONE);
    CHECK(m->nlocked == 9);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* A spec can hold a joint by hand, and the flags are checked. */
static void test_spec_locked_checked(void) {
    mn_spec* s = mn_spec_create("s");
    mn_joint_def d = mn_joint_default();
    d.name = "a";
    d.type = MN_JOINT_HINGE;
    d.locked = 8;
    mn_error err;
    CHECK(mn_spec_add_joint(s, &d, &err) < 0 && strstr(err.message, "locked"));
    d.locked = MN_LOCK_ROTATION;
    CHECK(mn_spec_add_joint(s, &d, &err) == 0);
    d.name = "b";
    d.parent = 0;
    d.type = MN_JOINT_SLIDE;
    d.locked = MN_LOCK_ROTATION; /* a slide has no rotation: nothing held */
    d.offset = mn_v3(1, 0, 0);
    CHECK(mn_spec_add_joint(s, &d, &err) == 1);
    mn_model* m = mn_model_compile(s, &err);
    CHECK(m && m->nlocked == 1 && m->dof_locked[0] == 1 && m->dof_locked[1] == 0);
    /* a chain whose every DOF is held is refused */
    mn_data* dd = mn_data_create(m, 0);
    mn_ik_problem p = mn_ik_problem_default();
    p.tip = 0;
    p.point = mn_v3(1, 0, 0);
    p.target_pos = mn_v3(0, 1, 0);
    mn_ik_result r;
    CHECK(mn_ik_solve(m, dd, &p, NULL, &r) == MN_ERR_ARG && strstr(r.message, "held"));
    mn_ik_options o = mn_ik_default();
    o.free_locked = 1;
    CHECK(mn_ik_solve(m, dd, &p, &o, &r) == MN_OK);
    mn_data_destroy(dd);
    mn_model_destroy(m);
    mn_spec_destroy(s);
}

static const mn_ik_method METHODS[] = {MN_IK_LM, MN_IK_DLS, MN_IK_PINV,
                                       MN_IK_JT, MN_IK_CCD, MN_IK_FABRIK};

/* One IK solve from frame 0 toward a target `factor` times the arm's reach from its first
 * pivot; returns the status and fills the held and length changes and the residual. */
static mn_status reach(const mn_model* m, const mn_motion* mo, const char* base, const char* tip,
                       mn_ik_method method, int free_locked, double factor, double* dheld,
                       double* dlen, double* pos_err, double* expect_err, long* allocs) {
    mn_data* d = mn_data_create(m, 0);
    memcpy(d->q, mo->q, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    int b = base ? mn_model_find_joint(m, base) : -1,
        t = mn_model_find_joint(m, tip); /* NULL: world */
    CHECK((!base || b >= 0) && t > b);
    /* the first moving joint below the base, and the reach of the links beyond it */
    int first = t;
    while (m->jnt_parent[first] != b)
        first = m->jnt_parent[first];
    double arm = path_length(m, d, first, t);
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    double* len0 = malloc(sizeof(double) * (size_t)m->njoint);
    double* len1 = malloc(sizeof(double) * (size_t)m->njoint);
    memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
    bone_lengths(m, d, len0);
    /* the target: from the first pivot, away from the body (base frame) */
    mn_xform Bi = b >= 0 ? mn_xform_inverse(&d->xf[b]) : mn_xform_identity();
    mn_vec3 pivot = mn_xform_apply(&Bi, d->xf[first].p);
    mn_vec3 dir = mn_vec3_normalize(mn_v3(0.6, 0.7, 0.38));
    mn_ik_problem p = mn_ik_problem_default();
    p.base = b;
    p.tip = t;
    p.target_pos = mn_vec3_madd(pivot, factor * arm, dir);
    mn_ik_options o = mn_ik_default();
    o.method = method;
    o.free_locked = free_locked;
    o.max_iters = 200;
    mn_ik_result r;
    long a0 = mn_alloc_count();
    mn_status st = mn_ik_solve(m, d, &p, &o, &r);
    *allocs = mn_alloc_count() - a0;
    mn_fk(m, d);
    bone_lengths(m, d, len1);
    *dheld = max_held_change(m, d->q, q0);
    *dlen = max_len_change(m, len1, len0);
    *pos_err = r.pos_err;
    *expect_err = (factor - 1.0) * arm;
    free(q0);
    free(len0);
    free(len1);
    mn_data_destroy(d);
    return st;
}

/* The methods whose every solve beyond reach ends as UNREACHABLE (PINV and JT may run out
 * of budget first, as on any chain). */
static int ends_unreachable(mn_ik_method meth) {
    return meth != MN_IK_PINV && meth != MN_IK_JT;
}

/* ref, when given, is the same figure without the held joints (the original BVH: balls in
 * place of free joints with held positions): every method must do there exactly what it
 * does on the held rig. */
static void check_methods(const mn_model* m, const mn_motion* mo, const mn_model* ref,
                          const mn_motion* ref_mo, const char* base, const char* tip,
                          int free_moves_geo) {
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++) {
        mn_ik_method meth = METHODS[i];
        double dheld, dlen, pe, expect;
        long allocs;
        /* beyond reach: UNREACHABLE, the arm stretched toward the target, lengths kept */
        mn_status st = reach(m, mo, base, tip, meth, 0, FAR, &dheld, &dlen, &pe, &expect, &allocs);
        if ((ends_unreachable(meth) && st != MN_ERR_UNREACHABLE) || dheld != 0 || !(dlen < 1e-9))
            fprintf(stderr, "  %s %s beyond reach: status %d, held moved %g, lengths %g\n", tip,
                    mn_ik_method_name(meth), (int)st, dheld, dlen);
        CHECK(st == MN_ERR_UNREACHABLE || (!ends_unreachable(meth) && st == MN_ERR_NOCONVERGE));
        CHECK(dheld == 0.0);
        CHECK(dlen < 1e-9);
        CHECK(allocs == 0);
        if (ends_unreachable(meth)) CHECK_NEAR(pe, expect, 1e-4 * expect); /* stretched toward it */
        if (ref) {
            double rh, rl, rpe, rexp;
            long ra;
            mn_status rst = reach(ref, ref_mo, base, tip, meth, 0, FAR, &rh, &rl, &rpe, &rexp, &ra);
            CHECK(rst == st);
            CHECK_NEAR(rpe, pe, 1e-6 * expect);
        }
        /* within reach: met with the lengths kept */
        st = reach(m, mo, base, tip, meth, 0, 0.7, &dheld, &dlen, &pe, &expect, &allocs);
        CHECK(st == MN_OK || (meth == MN_IK_JT && st == MN_ERR_NOCONVERGE));
        CHECK(dheld == 0.0 && dlen < 1e-9);
        /* freed: the translations move and the far target is met */
        if ((meth == MN_IK_CCD || meth == MN_IK_FABRIK) && !free_moves_geo) continue;
        st = reach(m, mo, base, tip, meth, 1, FAR, &dheld, &dlen, &pe, &expect, &allocs);
        if (meth != MN_IK_JT) {
            if (st != MN_OK)
                fprintf(stderr, "  %s %s freed: status %d, err %g\n", tip, mn_ik_method_name(meth),
                        (int)st, pe);
            CHECK(st == MN_OK);
        }
        CHECK(dheld > 1e-3);
        CHECK(dlen > 1e-3);
    }
}

/* The BVH walk (FREE joints below the root, position held): a 65 cm arm does not reach
 * 1.8 times its length. */
static void test_ik_methods_keep_bone_lengths_free_joints(void) {
    mn_motion mo;
    mn_model* m = read_bvh(WALK, &mo);
    if (!m) return;
    mn_motion ref_mo;
    mn_model* ref = read_bvh(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &ref_mo);
    /* CCD and FABRIK do not move a free joint whose position is not held */
    check_methods(m, &mo, ref, &ref_mo, "LeftShoulder", "LeftHand", 0);
    mn_motion_free(&ref_mo);
    mn_model_destroy(ref);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* The series arm (held SLIDEs between HINGEs, the chain fast path). */
static void test_ik_methods_keep_bone_lengths_slides(void) {
    mn_motion mo;
    mn_model* m = read_series(&mo);
    if (!m) return;
    check_methods(m, &mo, NULL, NULL, "Shoulder", "Hand_end", 1);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* The analytic method treats held joints as fixed: a ball shoulder and a hinge elbow with
 * a held slide in each bone. */
static void test_analytic_skips_held(void) {
    mn_spec* sp = mn_spec_create("arm");
    mn_joint_def d = mn_joint_default();
    const char* names[5] = {"shoulder", "upper", "elbow", "lower", "hand"};
    const mn_joint_type types[5] = {MN_JOINT_BALL, MN_JOINT_SLIDE, MN_JOINT_HINGE, MN_JOINT_SLIDE,
                                    MN_JOINT_FIXED};
    const double offx[5] = {0, 0.3, 0, 0.27, 0};
    for (int i = 0; i < 5; i++) {
        d.name = names[i];
        d.parent = i - 1;
        d.type = types[i];
        d.offset = mn_v3(offx[i], 0, 0);
        d.axis = types[i] == MN_JOINT_SLIDE ? mn_v3(1, 0, 0) : mn_v3(0, 0, 1);
        d.locked = types[i] == MN_JOINT_SLIDE ? MN_LOCK_TRANSLATION : MN_LOCK_NONE;
        d.q0[0] = types[i] == MN_JOINT_BALL ? 1 : types[i] == MN_JOINT_HINGE ? 0.4 : 0;
        CHECK(mn_spec_add_joint(sp, &d, NULL) == i);
    }
    mn_model* m = mn_model_compile(sp, NULL);
    mn_spec_destroy(sp);
    if (!m) return;
    mn_motion mo;
    memset(&mo, 0, sizeof mo);
    mo.q = m->q0;
    double dheld, dlen, pe, expect;
    long allocs;
    mn_status st =
        reach(m, &mo, NULL, "hand", MN_IK_ANALYTIC, 0, FAR, &dheld, &dlen, &pe, &expect, &allocs);
    CHECK(st == MN_ERR_UNREACHABLE && dheld == 0.0 && dlen < 1e-9);
    CHECK_NEAR(pe, expect, 1e-9);
    st = reach(m, &mo, NULL, "hand", MN_IK_ANALYTIC, 0, 0.8, &dheld, &dlen, &pe, &expect, &allocs);
    CHECK(st == MN_OK && dheld == 0.0 && dlen < 1e-9);
    /* freed, the slides are joints the analytic method does not solve for */
    st = reach(m, &mo, NULL, "hand", MN_IK_ANALYTIC, 1, 0.8, &dheld, &dlen, &pe, &expect, &allocs);
    CHECK(st == MN_ERR_UNSUPPORTED);
    mn_model_destroy(m);
}

/* The constraint solvers: the hips pinned where they are and the left hand pinned 1.5 times
 * the length of the path from the hips away. Held: the pins conflict (the bones keep their
 * lengths); freed: both pins are met by stretching. */
static void test_constraint_solvers_keep_bone_lengths(void) {
    mn_motion mo;
    mn_model* m = read_bvh(WALK, &mo);
    if (!m) return;
    int hand = mn_model_find_joint(m, "LeftHand");
    const mn_csolver solvers[] = {MN_CSOLVE_LAGRANGE, MN_CSOLVE_DLS, MN_CSOLVE_CCD};
    for (int fr = 0; fr < 2; fr++)
        for (int i = 0; i < 3; i++) {
            mn_data* d = mn_data_create(m, 0);
            memcpy(d->q, mo.q, sizeof(double) * (size_t)m->nq);
            mn_fk(m, d);
            double* q0 = malloc(sizeof(double) * (size_t)m->nq);
            double* len0 = malloc(sizeof(double) * (size_t)m->njoint);
            double* len1 = malloc(sizeof(double) * (size_t)m->njoint);
            memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
            bone_lengths(m, d, len0);
            double L = path_length(m, d, 0, hand);
            mn_figure fig = {m, d};
            mn_csys* s = mn_csys_create(&fig, 1, NULL, NULL);
            mn_handle_def h = mn_handle_default();
            h.joint = 0;
            int hh = mn_csys_add_handle(s, &h, NULL);
            h.joint = hand;
            int hn = mn_csys_add_handle(s, &h, NULL);
            mn_constraint_def c = mn_constraint_default();
            c.handle = hh;
            c.target = d->xf[0].p;
            CHECK(mn_csys_add_constraint(s, &c, NULL) == 0);
            c.handle = hn;
            c.target = mn_vec3_madd(d->xf[0].p, 1.5 * L, mn_vec3_normalize(mn_v3(1, 1, 0.5)));
            CHECK(mn_csys_add_constraint(s, &c, NULL) == 1);
            mn_csolve_options o = mn_csolve_default();
            o.method = solvers[i];
            o.free_locked = fr;
            o.max_iters = fr ? 400 : 60;
            mn_csolve_result r;
            long a0 = mn_alloc_count();
            mn_status st = mn_csys_solve(s, &o, &r);
            CHECK(mn_alloc_count() == a0);
            mn_fk(m, d);
            bone_lengths(m, d, len1);
            double dheld = max_held_change(m, d->q, q0), dlen = max_len_change(m, len1, len0);
            if (!fr) {
                if (st == MN_OK || dheld != 0 || !(dlen < 1e-9))
                    fprintf(stderr, "  %s held: status %d, held moved %g, lengths %g\n",
                            mn_csolver_name(solvers[i]), (int)st, dheld, dlen);
                CHECK(st != MN_OK);
                CHECK(dheld == 0.0);
                CHECK(dlen < 1e-9);
                /* the hand got no farther than the bones let it */
                CHECK(mn_vec3_dist(d->xf[hand].p, d->xf[0].p) <= L * (1 + 1e-9));
            } else {
                if (solvers[i] != MN_CSOLVE_CCD) {
                    if (st != MN_OK)
                        fprintf(stderr, "  %s freed: %s\n", mn_csolver_name(solvers[i]), r.message);
                    CHECK(st == MN_OK);
                }
                CHECK(dheld > 1e-3);
                CHECK(mn_vec3_dist(d->xf[hand].p, d->xf[0].p) > 1.1 * L);
            }
            mn_csys_destroy(s);
            free(q0);
            free(len0);
            free(len1);
            mn_data_destroy(d);
        }
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_bvh_holds_positions_below_root);
    RUN(test_spec_locked_checked);
    RUN(test_ik_methods_keep_bone_lengths_free_joints);
    RUN(test_ik_methods_keep_bone_lengths_slides);
    RUN(test_analytic_skips_held);
    RUN(test_constraint_solvers_keep_bone_lengths);
    return mn_test_report();
}
