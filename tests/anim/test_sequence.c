/* Sequences and sampling (Welman 6.1.2): keys reproduced, each interpolation mode against an
 * independent formula (Catmull-Rom's matrix form, Hermite with zero tangents, quaternion
 * slerp and squad written out here), hinge runs of the stick figure interpolated as one
 * rotation and mapped back without flips, stepped channels, bad arguments, and sampling
 * without a single heap allocation. */
#include <marionette/anim.h>
#include <marionette/io.h>
#include <marionette/layers.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "toy_model.h"

/* A figure of other joints: a free root and a hinge named otherwise. */
static mn_model* toy_other(void) {
    mn_spec* s = mn_spec_create("other");
    mn_joint_def d = mn_joint_default();
    d.name = "base";
    d.type = MN_JOINT_FREE;
    mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.name = "knee";
    d.parent = 0;
    d.type = MN_JOINT_HINGE;
    d.offset = mn_v3(0, 1, 0);
    mn_spec_add_joint(s, &d, NULL);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

/* Key k's state of the toy: positions, a ball rotation, a hinge angle, a slide. */
static void toy_key(int k, double* q) {
    double a = 0.7 * k;
    q[0] = sin(a) + k, q[1] = cos(1.3 * a), q[2] = 0.1 * k * k;
    mn_quat r = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(1, 0.3 * k, 0.2)), 0.5 + 0.4 * k);
    q[3] = r.w, q[4] = r.x, q[5] = r.y, q[6] = r.z;
    mn_quat b = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(sin(a), 1, cos(a))), 0.3 + 0.25 * k);
    q[7] = b.w, q[8] = b.x, q[9] = b.y, q[10] = b.z;
    q[11] = 0.4 * sin(2 * a) + 0.1 * k;
    q[12] = 0.05 * k + 0.02 * cos(a);
}

static mn_seq* toy_seq(const mn_model* m, int nkeys, const double* frames) {
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    double q[13];
    for (int k = 0; k < nkeys; k++) {
        toy_key(k, q);
        CHECK(mn_seq_set_key(s, frames[k], q, NULL) == k);
    }
    return s;
}

static const double UNIFORM[6] = {0, 10, 20, 30, 40, 50};
static const double UNEVEN[6] = {0, 4, 15, 19.5, 33, 40};

static void test_keys_reproduced(void) {
    mn_model* m = toy();
    CHECK(m->nq == 13);
    for (int mode = MN_INTERP_CONSTANT; mode <= MN_INTERP_SQUAD; mode++) {
        mn_seq* s = toy_seq(m, 6, UNEVEN);
        CHECK(mn_seq_set_default_interp(s, (mn_interp)mode,
                                        mode == MN_INTERP_SLERP ? MN_INTERP_CATMULL_ROM
                                                                : MN_INTERP_LINEAR) == MN_OK);
        double q[13], want[13];
        for (int k = 0; k < 6; k++) {
            memcpy(want, mn_seq_key_q(s, k), sizeof want);
            CHECK(mn_seq_sample(s, UNEVEN[k], q) == MN_OK);
            CHECK(memcmp(q, want, sizeof q) == 0);
            /* and continuity into the key from below */
            CHECK(mn_seq_sample(s, UNEVEN[k] - 1e-7, q) == MN_OK);
            for (int i = 0; i < 13 && k > 0 && mode != MN_INTERP_CONSTANT; i++)
                CHECK_NEAR(fabs(q[i]), fabs(want[i]), 1e-5);
        }
        /* clamped outside the keys */
        memcpy(want, mn_seq_key_q(s, 0), sizeof want);
        mn_seq_sample(s, -100, q);
        CHECK(memcmp(q, want, sizeof q) == 0);
        memcpy(want, mn_seq_key_q(s, 5), sizeof want);
        mn_seq_sample(s, 1e9, q);
        CHECK(memcmp(q, want, sizeof q) == 0);
        mn_seq_destroy(s);
    }
    mn_model_destroy(m);
}

/* Catmull-Rom on evenly spaced keys, in its matrix form (independent of the Hermite and
 * Kochanek-Bartels code in the library). */
static double cr_matrix(double p0, double p1, double p2, double p3, double u) {
    return 0.5 * (2 * p1 + (-p0 + p2) * u + (2 * p0 - 5 * p1 + 4 * p2 - p3) * u * u +
                  (-p0 + 3 * p1 - 3 * p2 + p3) * u * u * u);
}

static void test_catmull_rom_and_kb(void) {
    mn_model* m = toy();
    mn_seq* s = toy_seq(m, 6, UNIFORM);
    CHECK(mn_seq_set_default_interp(s, MN_INTERP_DEFAULT, MN_INTERP_CATMULL_ROM) == MN_OK);
    double keys[6][13], q[13];
    for (int k = 0; k < 6; k++)
        toy_key(k, keys[k]);
    for (int k = 1; k <= 3; k++)
        for (double u = 0.1; u < 1; u += 0.2) {
            mn_seq_sample(s, UNIFORM[k] + 10 * u, q);
            for (int i = 0; i < 3; i++)
                CHECK_NEAR(q[i],
                           cr_matrix(keys[k - 1][i], keys[k][i], keys[k + 1][i], keys[k + 2][i], u),
                           1e-12);
            CHECK_NEAR(q[12],
                       cr_matrix(keys[k - 1][12], keys[k][12], keys[k + 1][12], keys[k + 2][12], u),
                       1e-12);
        }
    /* Kochanek-Bartels with tension = continuity = bias = 0 is Catmull-Rom, also unevenly spaced */
    mn_seq* a = toy_seq(m, 6, UNEVEN);
    mn_seq* b = toy_seq(m, 6, UNEVEN);
    mn_seq_set_default_interp(a, MN_INTERP_DEFAULT, MN_INTERP_CATMULL_ROM);
    mn_seq_set_default_interp(b, MN_INTERP_DEFAULT, MN_INTERP_KB);
    double qa[13], qb[13];
    for (double f = 0; f <= 40; f += 0.37) {
        mn_seq_sample(a, f, qa);
        mn_seq_sample(b, f, qb);
        CHECK(memcmp(qa, qb, sizeof qa) == 0);
    }
    /* tension 1 on every key: zero tangents, p_k + (3u^2 - 2u^3)(p_k+1 - p_k) */
    for (int k = 0; k < 6; k++)
        CHECK(mn_seq_set_key_tcb(b, k, 1, 0, 0) == MN_OK);
    for (int k = 0; k < 5; k++)
        for (double u = 0.05; u < 1; u += 0.3) {
            double f = UNEVEN[k] + u * (UNEVEN[k + 1] - UNEVEN[k]);
            mn_seq_sample(b, f, qb);
            double h = 3 * u * u - 2 * u * u * u;
            toy_key(k, qa);
            double want0 = qa[0];
            toy_key(k + 1, qa);
            CHECK_NEAR(qb[0], want0 + h * (qa[0] - want0), 1e-12);
        }
    /* bias changes the curve (and tcb are kept per key) */
    double tcb[3];
    CHECK(mn_seq_set_key_tcb(b, 2, 0, 0, 0.8) == MN_OK);
    CHECK(mn_seq_key_tcb(b, 2, tcb) == MN_OK && tcb[2] == 0.8 && tcb[0] == 0);
    CHECK(mn_seq_set_key_tcb(b, 2, 0, 0, 1.5) == MN_ERR_ARG);
    mn_seq_destroy(a);
    mn_seq_destroy(b);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* Slerp and squad written out independently: slerp by axis-angle powers, squad from its
 * definition with the inner points from quaternion logarithms. */
static mn_quat qpow_slerp(mn_quat a, mn_quat b, double u) {
    mn_quat d = mn_quat_mul(mn_quat_conj(a), b); /* a^-1 b */
    mn_vec3 r = mn_quat_log(d);                  /* rotation vector, shortest when dot >= 0 */
    return mn_quat_mul(a, mn_quat_exp(mn_vec3_scale(r, u)));
}
static mn_quat inner(mn_quat p, mn_quat q, mn_quat n) {
    mn_quat iq = mn_quat_conj(q);
    mn_vec3 l = mn_vec3_add(mn_quat_log(mn_quat_mul(iq, n)), mn_quat_log(mn_quat_mul(iq, p)));
    return mn_quat_mul(q, mn_quat_exp(mn_vec3_scale(l, -0.25)));
}
static mn_quat hemi(mn_quat q, mn_quat ref) {
    return mn_quat_dot(q, ref) < 0 ? mn_q4(-q.w, -q.x, -q.y, -q.z) : q;
}

static double qdist(mn_quat a, mn_quat b) {
    return mn_quat_angle_between(a, b);
}

static void test_slerp_and_squad(void) {
    mn_model* m = toy();
    mn_seq* s = toy_seq(m, 6, UNIFORM);
    double keys[6][13], q[13];
    for (int k = 0; k < 6; k++)
        toy_key(k, keys[k]);
    mn_quat K[6];
    for (int k = 0; k < 6; k++) {
        K[k] = mn_q4(keys[k][7], keys[k][8], keys[k][9], keys[k][10]);
        if (k) K[k] = hemi(K[k], K[k - 1]);
    }
    CHECK(mn_seq_set_default_interp(s, MN_INTERP_SLERP, MN_INTERP_DEFAULT) == MN_OK);
    for (int k = 0; k < 5; k++)
        for (double u = 0.1; u < 1; u += 0.2) {
            mn_seq_sample(s, 10 * (k + u), q);
            CHECK(qdist(mn_q4(q[7], q[8], q[9], q[10]), qpow_slerp(K[k], K[k + 1], u)) < 1e-12);
        }
    CHECK(mn_seq_set_default_interp(s, MN_INTERP_SQUAD, MN_INTERP_DEFAULT) == MN_OK);
    for (int k = 1; k < 4; k++) {
        mn_quat sa = inner(K[k - 1], K[k], K[k + 1]), sb = inner(K[k], K[k + 1], K[k + 2]);
        for (double u = 0.1; u < 1; u += 0.2) {
            mn_seq_sample(s, 10 * (k + u), q);
            mn_quat p1 = qpow_slerp(K[k], K[k + 1], u), p2 = qpow_slerp(sa, sb, u);
            mn_quat want = qpow_slerp(p1, p2, 2 * u * (1 - u));
            CHECK(qdist(mn_q4(q[7], q[8], q[9], q[10]), want) < 1e-12);
            CHECK_NEAR(mn_quat_norm(mn_q4(q[7], q[8], q[9], q[10])), 1, 1e-14);
        }
    }
    /* a single hinge under squad is squad of the rotations about its axis */
    mn_vec3 X = mn_v3(1, 0, 0);
    mn_quat H[6];
    for (int k = 0; k < 6; k++)
        H[k] = mn_quat_axis_angle(X, keys[k][11]);
    for (int k = 1; k < 4; k++) {
        mn_quat sa = inner(H[k - 1], H[k], H[k + 1]), sb = inner(H[k], H[k + 1], H[k + 2]);
        for (double u = 0.1; u < 1; u += 0.2) {
            mn_seq_sample(s, 10 * (k + u), q);
            mn_quat want =
                qpow_slerp(qpow_slerp(H[k], H[k + 1], u), qpow_slerp(sa, sb, u), 2 * u * (1 - u));
            CHECK(qdist(mn_quat_axis_angle(X, q[11]), want) < 1e-12);
        }
    }
    /* a ball under LINEAR: linear in its Euler angles (rot_order ZXY) */
    CHECK(mn_seq_set_joint_interp(s, 1, MN_INTERP_LINEAR, MN_INTERP_DEFAULT) == MN_OK);
    for (int k = 0; k < 5; k++) {
        double ea[3], eb[3], e[3];
        mn_euler_from_quat(MN_EULER_ZXY, K[k], ea);
        mn_euler_from_quat(MN_EULER_ZXY, K[k + 1], eb);
        mn_seq_sample(s, 10 * k + 5, q);
        for (int i = 0; i < 3; i++)
            e[i] = 0.5 * (ea[i] + eb[i]); /* the toy's angles stay within (-pi/2, pi/2) */
        CHECK(qdist(mn_q4(q[7], q[8], q[9], q[10]), mn_euler_to_quat(MN_EULER_ZXY, e)) < 1e-12);
    }
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static void test_constant_and_linear(void) {
    mn_model* m = toy();
    mn_seq* s = toy_seq(m, 6, UNEVEN);
    double a[13], b[13], q[13];
    CHECK(mn_seq_set_joint_interp(s, 3, MN_INTERP_DEFAULT, MN_INTERP_CONSTANT) ==
          MN_OK); /* the slide steps */
    CHECK(mn_seq_set_joint_interp(s, 2, MN_INTERP_CONSTANT, MN_INTERP_DEFAULT) ==
          MN_OK); /* the hinge steps */
    CHECK(mn_seq_set_joint_interp(s, 0, MN_INTERP_CONSTANT, MN_INTERP_LINEAR) == MN_OK);
    toy_key(2, a);
    toy_key(3, b);
    double f = 15 + 0.999 * 4.5;
    mn_seq_sample(s, f, q);
    CHECK(q[12] == a[12] && q[11] == a[11]);
    CHECK(q[3] == a[3] && q[6] == a[6]);
    double u = (f - 15) / 4.5;
    CHECK_NEAR(q[0], a[0] + u * (b[0] - a[0]), 1e-14);
    mn_seq_sample(s, 19.5, q);
    CHECK(q[12] == b[12]);
    /* modes that do not apply are refused */
    CHECK(mn_seq_set_joint_interp(s, 3, MN_INTERP_DEFAULT, MN_INTERP_SLERP) == MN_ERR_ARG);
    CHECK(mn_seq_set_joint_interp(s, 1, MN_INTERP_KB, MN_INTERP_DEFAULT) == MN_ERR_ARG);
    CHECK(mn_seq_set_joint_interp(s, 2, MN_INTERP_KB, MN_INTERP_DEFAULT) == MN_OK);
    CHECK(mn_seq_set_default_interp(s, MN_INTERP_CATMULL_ROM, MN_INTERP_DEFAULT) == MN_ERR_ARG);
    CHECK(mn_seq_set_default_interp(s, MN_INTERP_DEFAULT, MN_INTERP_SQUAD) == MN_ERR_ARG);
    CHECK(mn_seq_set_joint_interp(s, 99, MN_INTERP_LINEAR, MN_INTERP_LINEAR) == MN_ERR_ARG);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* The rotation of a run of hinges from its joint values (the model's own FK, independent of
 * the Euler code). */
static mn_mat3 run_rotation(const mn_model* m, mn_data* d, const double* q, int first, int len) {
    memcpy(d->q, q, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    int last = first;
    for (int i = 1; i < len; i++)
        for (int c = last + 1; c < m->njoint; c++)
            if (m->jnt_parent[c] == last && m->jnt_offset[c].x == 0 && m->jnt_offset[c].y == 0 &&
                m->jnt_offset[c].z == 0) {
                last = c;
                break;
            }
    /* relative to the first joint's parent frame and its fixed orientation */
    mn_mat3 P = mn_mat3_mul(&d->xf[m->jnt_parent[first]].R, &m->jnt_orient_mat[first]);
    return mn_mat3_tmul(&P, &d->xf[last].R);
}

static void test_stickman_runs(void) {
    mn_model* m = mn_stickman_model(NULL);
    CHECK(m != NULL);
    mn_data* d = mn_data_create(m, 0);
    mn_seq* s = mn_seq_create(m, NULL, NULL); /* SLERP by default */
    /* the compound joints: torso, head, arms, legs (3 hinges), hands and feet (2) */
    CHECK(mn_seq_run_count(s) == 10);
    int n3 = 0, n2 = 0;
    for (int r = 0; r < mn_seq_run_count(s); r++) {
        int first, len;
        mn_seq_run(s, r, &first, &len);
        n3 += len == 3, n2 += len == 2;
    }
    CHECK(n3 == 6 && n2 == 4);
    /* two keys: the right arm raised forwards past 90 degrees in both (its Euler angles
     * are off the principal branch, where decomposing the rotation alone would flip z and y
     * by 180 degrees and leave the limits), the left arm, torso, legs and a wrist turn */
    double* q0 = calloc((size_t)m->nq, sizeof(double));
    double* q1 = calloc((size_t)m->nq, sizeof(double));
    double* q = calloc((size_t)m->nq, sizeof(double));
    double* qp = calloc((size_t)m->nq, sizeof(double));
    memcpy(q0, m->q0, sizeof(double) * (size_t)m->nq);
    memcpy(q1, m->q0, sizeof(double) * (size_t)m->nq);
    const double deg = MN_PI / 180;
    struct {
        const char* name;
        double v0, v1;
    } set[] = {{"right arm.1", -10, -30}, {"right arm.2", -120, -165}, {"right arm", 5, 20},
               {"left arm.1", 0, -60},    {"left arm.2", 0, -30},      {"left arm", 0, -70},
               {"torso.1", 0, 20},        {"torso.2", 0, 60},          {"torso", 0, -30},
               {"right hand.1", 0, 50},   {"right hand", 0, 25},       {"left leg.2", 0, -80}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
        int j = mn_model_find_joint(m, set[i].name);
        CHECK(j >= 0);
        q0[m->jnt_qadr[j]] = set[i].v0 * deg;
        q1[m->jnt_qadr[j]] = set[i].v1 * deg;
    }
    CHECK(mn_seq_set_key(s, 0, q0, NULL) == 0);
    CHECK(mn_seq_set_key(s, 40, q1, NULL) == 1);
    for (int mode = MN_INTERP_SLERP; mode <= MN_INTERP_SQUAD; mode++) {
        mn_seq_set_default_interp(s, (mn_interp)mode, MN_INTERP_DEFAULT);
        double maxjump = 0;
        mn_seq_sample(s, 0, qp);
        for (double f = 0.25; f <= 40; f += 0.25) {
            CHECK(mn_seq_sample(s, f, q) == MN_OK);
            CHECK(mn_q_within_limits(m, q, 1e-12));
            for (int i = 0; i < m->nq; i++)
                maxjump = fmax(maxjump, fabs(q[i] - qp[i]));
            memcpy(qp, q, sizeof(double) * (size_t)m->nq);
            if (mode != MN_INTERP_SLERP) continue;
            /* each 3-hinge run is the slerp of the keys' run rotations */
            double u = f / 40;
            for (int r = 0; r < mn_seq_run_count(s); r++) {
                int first, len;
                mn_seq_run(s, r, &first, &len);
                if (len != 3) continue;
                mn_mat3 R0 = run_rotation(m, d, q0, first, 3),
                        R1 = run_rotation(m, d, q1, first, 3);
                mn_mat3 R = run_rotation(m, d, q, first, 3);
                mn_quat want = mn_quat_slerp(mn_quat_from_mat3(&R0), mn_quat_from_mat3(&R1), u);
                CHECK(qdist(mn_quat_from_mat3(&R), want) < 1e-9);
            }
        }
        /* no flips: 160 samples over at most ~150 degrees of any hinge */
        CHECK(maxjump < 4 * deg);
        /* continuity into the second key on its own branch */
        mn_seq_sample(s, 40 - 1e-6, q);
        for (int i = 0; i < m->nq; i++)
            CHECK_NEAR(q[i], q1[i], 1e-6);
    }
    /* a swing from hanging to far forwards and sideways: the slerp of the shoulder's
     * rotation would take the arm out of its limits (z to +160 degrees), so that segment is
     * interpolated linearly in the angles instead */
    int ra = mn_model_find_joint(m, "right arm.1");
    double big[3] = {-100 * deg, -150 * deg, 40 * deg};
    for (int i = 0; i < 3; i++)
        q0[m->jnt_qadr[ra] + i] = 0, q1[m->jnt_qadr[ra] + i] = big[i];
    mn_seq_set_default_interp(s, MN_INTERP_SLERP, MN_INTERP_DEFAULT);
    CHECK(mn_seq_set_key(s, 0, q0, NULL) == 0 && mn_seq_set_key(s, 40, q1, NULL) == 1);
    for (double f = 0.5; f < 40; f += 0.5) {
        mn_seq_sample(s, f, q);
        for (int i = 0; i < 3; i++)
            CHECK_NEAR(q[m->jnt_qadr[ra] + i], f / 40 * big[i], 1e-12);
    }
    /* the same keys linear in the angles: the midpoint is the mean */
    mn_seq_set_default_interp(s, MN_INTERP_LINEAR, MN_INTERP_DEFAULT);
    CHECK(mn_seq_run_count(s) == 0);
    mn_seq_sample(s, 20, q);
    for (int i = 7; i < m->nq; i++)
        CHECK_NEAR(q[i], 0.5 * (q0[i] + q1[i]), 1e-15);
    free(q0), free(q1), free(q), free(qp);
    mn_seq_destroy(s);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_bad_input(void) {
    mn_model* m = toy();
    mn_error err;
    mn_seq_def def = mn_seq_def_default();
    def.fps = 0;
    CHECK(mn_seq_create(m, &def, &err) == NULL && err.status == MN_ERR_ARG &&
          !strcmp(err.field, "fps"));
    CHECK(mn_seq_create(NULL, NULL, &err) == NULL);
    mn_seq* s = mn_seq_create(m, NULL, &err);
    double q[13];
    CHECK(mn_seq_sample(s, 0, q) == MN_ERR_ARG); /* no keys */
    toy_key(1, q);
    q[5] = NAN;
    CHECK(mn_seq_set_key(s, 0, q, &err) == -1 && !strcmp(err.field, "pose"));
    toy_key(1, q);
    CHECK(mn_seq_set_key(s, INFINITY, q, &err) == -1 && !strcmp(err.field, "frame"));
    CHECK(mn_seq_key_count(s) == 0);
    /* quaternions are normalised on the way in */
    q[3] *= 2, q[4] *= 2, q[5] *= 2, q[6] *= 2;
    CHECK(mn_seq_set_key(s, 3, q, &err) == 0);
    const double* k = mn_seq_key_q(s, 0);
    CHECK_NEAR(k[3] * k[3] + k[4] * k[4] + k[5] * k[5] + k[6] * k[6], 1, 1e-15);
    CHECK(mn_seq_sample(s, NAN, q) == MN_ERR_ARG);
    CHECK(mn_seq_sample(s, 7, q) == MN_OK);
    CHECK(mn_seq_remove_key(s, 3) == MN_ERR_ARG);
    CHECK(mn_seq_remove_key(s, 0) == MN_OK && mn_seq_key_count(s) == 0);
    CHECK(mn_interp_parse("squad") == MN_INTERP_SQUAD && mn_interp_parse("bogus") == -1);
    CHECK(!strcmp(mn_interp_name(MN_INTERP_CATMULL_ROM), "catmull-rom"));
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

static void test_no_allocation(void) {
    mn_model* m = mn_stickman_model(NULL);
    mn_data* d = mn_data_create(m, 0);
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    mn_seq_set_default_interp(s, MN_INTERP_SQUAD, MN_INTERP_CATMULL_ROM);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < 5; k++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int i = 7; i < m->nq; i++)
            q[i] = 0.2 * sin(1.3 * i + k);
        q[1] += 0.05 * k;
        mn_clamp_to_limits(m, q);
        mn_seq_set_key(s, 10 * k, q, NULL);
    }
    const mn_seq* cs = s;
    long before = mn_alloc_count();
    double acc = 0;
    for (double f = -3; f < 45; f += 0.1) {
        mn_seq_sample(cs, f, q);
        mn_seq_sample_data(cs, d, f);
        acc += q[0] + d->xf[m->njoint - 1].p.y;
    }
    CHECK(mn_alloc_count() == before);
    CHECK(isfinite(acc));
    free(q);
    mn_seq_destroy(s);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_clone(void) {
    mn_model* m = toy();
    mn_seq* s = toy_seq(m, 6, UNEVEN);
    mn_seq_set_joint_interp(s, 2, MN_INTERP_KB, MN_INTERP_DEFAULT);
    mn_seq_set_key_tcb(s, 3, 0.2, -0.4, 0.5);
    mn_seq* c = mn_seq_clone(s);
    double a[13], b[13];
    for (double f = 0; f < 41; f += 0.7) {
        mn_seq_sample(s, f, a);
        mn_seq_sample(c, f, b);
        CHECK(memcmp(a, b, sizeof a) == 0);
    }
    mn_seq_destroy(c);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* A BVH take as a sequence: every frame a key reproduces it exactly; reduced keys keep every
 * joint of every frame within the tolerance (checked here by forward kinematics). */
static void test_from_motion(void) {
    mn_bvh_options bo = mn_bvh_default();
    bo.scale = 0.056444;
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    CHECK(mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &bo, &m, &mo, NULL,
                      &err) == MN_OK);
    if (!m) return;
    int n = 120; /* the first second */
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    int nk = 0;
    double e = -1;
    CHECK(mn_seq_add_motion(s, mo.q, n, 0, 0, &nk, &e, &err) == MN_OK && nk == n && e == 0);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    for (int f = 0; f < n; f++) {
        mn_seq_sample(s, f, q);
        CHECK(memcmp(q, mo.q + (size_t)f * (size_t)mo.nq, sizeof(double) * (size_t)m->nq) == 0);
    }
    mn_seq_destroy(s);
    s = mn_seq_create(m, NULL, NULL);
    mn_seq_set_default_interp(s, MN_INTERP_SQUAD, MN_INTERP_CATMULL_ROM);
    const double tol = 0.005;
    CHECK(mn_seq_add_motion(s, mo.q, n, 10, tol, &nk, &e, &err) == MN_OK);
    CHECK(nk == mn_seq_key_count(s) && nk < n / 2 && e <= tol);
    CHECK(mn_seq_start(s) == 10 && mn_seq_end(s) == 10 + n - 1);
    mn_data* a = mn_data_create(m, 0);
    mn_data* b = mn_data_create(m, 0);
    double worst = 0;
    for (int f = 0; f < n; f++) {
        memcpy(a->q, mo.q + (size_t)f * (size_t)mo.nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, a);
        mn_seq_sample_data(s, b, 10 + f);
        for (int j = 0; j < m->njoint; j++)
            worst = fmax(worst, mn_vec3_dist(a->xf[j].p, b->xf[j].p));
    }
    printf("  CMU walk, first second: %d keys of %d frames within %.3f m (largest error %.4f m)\n",
           nk, n, tol, worst);
    CHECK(worst <= tol && fabs(worst - e) < 1e-12);
    q[0] = NAN;
    CHECK(mn_seq_add_motion(s, q, 1, 0, 0, NULL, NULL, &err) == MN_ERR_ARG);
    free(q);
    mn_data_destroy(a);
    mn_data_destroy(b);
    mn_seq_destroy(s);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* Reentrancy: four threads sample one const sequence into their own buffers and get what a
 * single thread gets, bit for bit. */
typedef struct job {
    const mn_seq* s;
    int nq, n;
    double* out; /* n x nq */
} job;

static void* sample_job(void* p) {
    job* j = p;
    for (int i = 0; i < j->n; i++)
        mn_seq_sample(j->s, 0.037 * i, j->out + (size_t)i * (size_t)j->nq);
    return NULL;
}

/* The whole CMU walk within 1 mm: greedy insertion alone needed 314 keys of 344 frames; the
 * pass that drops keys a later key made unnecessary brings that down, and the bound still
 * holds at every frame (measured here). */
static void test_from_motion_whole_take(void) {
    mn_bvh_options bo = mn_bvh_default();
    bo.scale = 0.056444;
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    CHECK(mn_bvh_read(MN_DATA "/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", &bo, &m, &mo, NULL,
                      &err) == MN_OK);
    if (!m) return;
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    mn_seq_set_default_interp(s, MN_INTERP_SQUAD, MN_INTERP_CATMULL_ROM);
    int nk = 0;
    double e = -1;
    CHECK(mn_seq_add_motion(s, mo.q, mo.nframes, 0, 0.001, &nk, &e, &err) == MN_OK);
    CHECK(nk == mn_seq_key_count(s) && nk < 314 && e <= 0.001);
    mn_data* a = mn_data_create(m, 0);
    mn_data* b = mn_data_create(m, 0);
    double worst = 0;
    for (int f = 0; f < mo.nframes; f++) {
        memcpy(a->q, mo.q + (size_t)f * (size_t)mo.nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, a);
        mn_seq_sample_data(s, b, f);
        for (int j = 0; j < m->njoint; j++)
            worst = fmax(worst, mn_vec3_dist(a->xf[j].p, b->xf[j].p));
    }
    printf("  CMU walk: %d keys of %d frames within 1 mm (largest error %.6f m)\n", nk, mo.nframes,
           worst);
    CHECK(worst <= 0.001);
    CHECK_NEAR(worst, e, 1e-12);
    mn_data_destroy(a);
    mn_data_destroy(b);
    mn_seq_destroy(s);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

static void test_threads(void) {
    mn_model* m = mn_stickman_model(NULL);
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    mn_seq_set_default_interp(s, MN_INTERP_SQUAD, MN_INTERP_KB);
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < 6; k++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        for (int i = 7; i < m->nq; i++)
            q[i] = 0.3 * sin(0.9 * i + 1.7 * k);
        q[2] = 0.1 * k;
        mn_clamp_to_limits(m, q);
        mn_seq_set_key(s, 7.5 * k, q, NULL);
    }
    enum { N = 1000, T = 4 };
    job jobs[T + 1];
    pthread_t th[T];
    for (int t = 0; t <= T; t++) {
        jobs[t].s = s, jobs[t].nq = m->nq, jobs[t].n = N;
        jobs[t].out = malloc(sizeof(double) * N * (size_t)m->nq);
    }
    sample_job(&jobs[T]); /* the reference, on this thread */
    for (int t = 0; t < T; t++)
        CHECK(pthread_create(&th[t], NULL, sample_job, &jobs[t]) == 0);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < T; t++)
        CHECK(memcmp(jobs[t].out, jobs[T].out, sizeof(double) * N * (size_t)m->nq) == 0);
    for (int t = 0; t <= T; t++)
        free(jobs[t].out);
    free(q);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* A constraint removed from a sequence is gone with its target keys; the one after it
 * moves down, its name and keys intact; a bad index is refused. */
static void test_remove_constraint(void) {
    mn_model* m = mn_stickman_model(NULL);
    mn_seq* s = mn_seq_create(m, NULL, NULL);
    mn_handle_def h = mn_handle_default();
    h.joint = mn_model_find_joint(m, "left hand");
    int a = mn_seq_add_handle(s, &h, NULL);
    h.joint = mn_model_find_joint(m, "right hand");
    int b = mn_seq_add_handle(s, &h, NULL);
    const char* names[2] = {"left reach", "right reach"};
    int hs[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        mn_seq_constraint_def c = mn_seq_constraint_default();
        c.con.handle = hs[i];
        c.con.name = names[i];
        CHECK(mn_seq_add_constraint(s, &c, NULL) == i);
        for (int k = 0; k <= i + 1; k++) {
            mn_target_key t = {10.0 * k, mn_v3(0.1 * i, 1, 0.1 * k), mn_v3(0, 0, 0),
                               mn_quat_identity()};
            CHECK(mn_seq_set_target_key(s, i, &t, NULL) == MN_OK);
        }
    }
    CHECK(mn_seq_remove_constraint(s, 0) == MN_OK);
    CHECK(mn_seq_remove_constraint(s, 1) == MN_ERR_ARG);
    CHECK(mn_seq_constraint_count(s) == 1);
    CHECK(mn_seq_find_constraint(s, "left reach") < 0);
    CHECK(mn_seq_find_constraint(s, "right reach") == 0);
    CHECK(!strcmp(mn_seq_constraint(s, 0)->con.name, "right reach"));
    CHECK(mn_seq_constraint(s, 0)->con.handle == b);
    CHECK(mn_seq_target_key_count(s, 0) == 3);
    mn_seq_destroy(s);
    mn_model_destroy(m);
}

/* A sequence moved onto a re-rooting of its figure (mn_seq_reroot; Welman 2.1.2, 6.3): each
 * key puts every joint where it did (1e-12), the handles and constraints come along, and
 * re-rooting back gives the keys again; layers are refused. */
static void test_reroot(void) {
    mn_model* m = toy();
    mn_model* r = mn_model_reroot(m, mn_model_find_joint(m, "slide"), NULL, NULL);
    CHECK(r && !strcmp(r->jnt_name[0], "slide"));
    if (!r) {
        mn_model_destroy(m);
        return;
    }
    mn_seq_def def = mn_seq_def_default();
    def.fps = 24;
    mn_seq* s = mn_seq_create(m, &def, NULL);
    double q[16];
    for (int k = 0; k < 3; k++) {
        memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
        q[0] = 0.1 * k, q[1] = 0.2, q[2] = -0.05 * k;
        mn_quat a = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(0.2, 1, 0.1 * k)), 0.3 + 0.2 * k);
        q[3] = a.w, q[4] = a.x, q[5] = a.y, q[6] = a.z;
        mn_quat b = mn_quat_axis_angle(mn_vec3_normalize(mn_v3(1, 0.3, -0.2)), 0.4 * k - 0.2);
        q[7] = b.w, q[8] = b.x, q[9] = b.y, q[10] = b.z;
        q[11] = 0.5 - 0.3 * k, q[12] = 0.1 * k;
        mn_clamp_to_limits(m, q);
        CHECK(mn_seq_set_key(s, 10.0 * k, q, NULL) == k);
    }
    mn_seq_set_joint_interp(s, mn_model_find_joint(m, "hinge"), MN_INTERP_CATMULL_ROM,
                            MN_INTERP_DEFAULT);
    mn_handle_def h = mn_handle_default();
    h.joint = mn_model_find_joint(m, "hinge");
    h.point = mn_v3(0, 0.1, 0);
    h.name = "tip";
    int hi = mn_seq_add_handle(s, &h, NULL);
    mn_seq_constraint_def c = mn_seq_constraint_default();
    c.con.handle = hi;
    c.lock = 1;
    c.start = 5, c.end = 15;
    CHECK(mn_seq_add_constraint(s, &c, NULL) == 0);
    mn_error err;
    mn_seq* t = mn_seq_reroot(s, r, &err);
    CHECK(t && mn_seq_key_count(t) == 3 && mn_seq_fps(t) == 24 && mn_seq_model(t) == r);
    if (t) {
        mn_data* da = mn_data_create(m, 0);
        mn_data* db = mn_data_create(r, 0);
        double worst = 0;
        for (int k = 0; k < 3; k++) {
            memcpy(da->q, mn_seq_key_q(s, k), sizeof(double) * (size_t)m->nq);
            memcpy(db->q, mn_seq_key_q(t, k), sizeof(double) * (size_t)r->nq);
            mn_fk(m, da);
            mn_fk(r, db);
            for (int j = 0; j < m->njoint; j++) {
                int jb = mn_model_find_joint(r, m->jnt_name[j]);
                worst = fmax(worst, mn_vec3_dist(da->xf[j].p, db->xf[jb].p));
                for (int i = 0; i < 9; i++)
                    worst = fmax(worst, fabs(da->xf[j].R.m[i] - db->xf[jb].R.m[i]));
            }
            CHECK(mn_seq_key_frame(t, k) == 10.0 * k);
        }
        CHECK(worst < 1e-12);
        /* the hinge's own interpolation goes with its motion, turned round ("hinge~") */
        mn_interp rot, trans;
        int hr = mn_model_find_joint(r, "hinge~");
        CHECK(hr >= 0);
        if (hr >= 0) {
            mn_seq_joint_interp(t, hr, &rot, &trans);
            CHECK(rot == MN_INTERP_CATMULL_ROM);
        }
        const mn_handle_def* th = mn_seq_handle(t, 0);
        CHECK(mn_seq_handle_count(t) == 1 && mn_seq_constraint_count(t) == 1 &&
              !strcmp(r->jnt_name[th->joint], "hinge") && mn_seq_constraint(t, 0)->lock);
        /* and back: the original keys */
        mn_seq* u = mn_seq_reroot(t, m, &err);
        CHECK(u && mn_seq_key_count(u) == 3);
        double back = 0;
        for (int k = 0; u && k < 3; k++)
            for (int i = 0; i < m->nq; i++)
                back = fmax(back, fabs(mn_seq_key_q(u, k)[i] - mn_seq_key_q(s, k)[i]));
        CHECK(back < 1e-12);
        mn_seq_destroy(u);
        mn_data_destroy(da);
        mn_data_destroy(db);
    }
    /* layers are refused, and a figure that is not a re-rooting */
    mn_seq_add_layer(s, "l", MN_LAYER_OVERRIDE, NULL);
    CHECK(!mn_seq_reroot(s, r, &err) && err.status == MN_ERR_UNSUPPORTED &&
          !strcmp(err.field, "layers"));
    mn_seq_remove_layer(s, 0);
    mn_model* other = toy_other();
    CHECK(!mn_seq_reroot(s, other, &err) && err.status == MN_ERR_NOTFOUND);
    mn_model_destroy(other);
    mn_seq_destroy(t);
    mn_seq_destroy(s);
    mn_model_destroy(r);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_keys_reproduced);
    RUN(test_catmull_rom_and_kb);
    RUN(test_slerp_and_squad);
    RUN(test_constant_and_linear);
    RUN(test_stickman_runs);
    RUN(test_bad_input);
    RUN(test_no_allocation);
    RUN(test_clone);
    RUN(test_from_motion);
    RUN(test_from_motion_whole_take);
    RUN(test_threads);
    RUN(test_remove_constraint);
    RUN(test_reroot);
    return mn_test_report();
}
