/* The closed forms of src/ik/closed_form.c and LM's use of them: each family found on the
 * arms that have it (the kinematics of data/robots' LBR iiwa, UR5 and Kinova Jaco 2
 * j2s6s200, transcribed here joint by joint from their URDFs) and on no other chain;
 * the product of exponentials equal to the chain's FK; every answer's FK the target, the
 * configuration the target came from among the answers; LM meeting such goals with no
 * iteration, within the limits, without heap allocation; and the numeric path still taking
 * the goals the closed form does not (position only, a singular wrist). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ik/closed_form.h"
#include "ik/ik_common.h"
#include "test.h"

/* One URDF joint: origin xyz and rpy in the parent's frame, axis, limits (lo == hi: none),
 * and whether it is a hinge (else fixed). */
typedef struct ujoint {
    double xyz[3], rpy[3], axis[3], lo, hi;
    int hinge;
} ujoint;

static mn_quat rpy_quat(const double* rpy) { /* URDF: Rz(yaw) Ry(pitch) Rx(roll) */
    mn_quat qx = mn_quat_axis_angle(mn_v3(1, 0, 0), rpy[0]);
    mn_quat qy = mn_quat_axis_angle(mn_v3(0, 1, 0), rpy[1]);
    mn_quat qz = mn_quat_axis_angle(mn_v3(0, 0, 1), rpy[2]);
    mn_quat t = mn_quat_mul(qy, qx);
    return mn_quat_mul(qz, t);
}

static mn_model* build(const char* name, const ujoint* js, int n) {
    mn_spec* s = mn_spec_create(name);
    char jn[16];
    for (int i = 0; i < n; i++) {
        mn_joint_def d = mn_joint_default();
        snprintf(jn, sizeof jn, "j%d", i + 1);
        d.name = jn;
        d.parent = i - 1;
        d.type = js[i].hinge ? MN_JOINT_HINGE : MN_JOINT_FIXED;
        d.offset = mn_v3(js[i].xyz[0], js[i].xyz[1], js[i].xyz[2]);
        d.orient = rpy_quat(js[i].rpy);
        d.axis = mn_v3(js[i].axis[0], js[i].axis[1], js[i].axis[2]);
        if (js[i].hinge && js[i].lo < js[i].hi) {
            d.limited = 1;
            d.range[0] = js[i].lo;
            d.range[1] = js[i].hi;
        }
        CHECK(mn_spec_add_joint(s, &d, NULL) == i);
    }
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

#define PI_2 1.57079632679
#define PI_ 3.14159265359
#define TURN 6.28318530718

/* data/robots/kuka_iiwa/model.urdf, lbr_iiwa_link_0 -> lbr_iiwa_link_7 */
static const ujoint iiwa[7] = {
    {{0, 0, 0.1575}, {0, 0, 0}, {0, 0, 1}, -2.96705972839, 2.96705972839, 1},
    {{0, 0, 0.2025}, {PI_2, 0, PI_}, {0, 0, 1}, -2.09439510239, 2.09439510239, 1},
    {{0, 0.2045, 0}, {PI_2, 0, PI_}, {0, 0, 1}, -2.96705972839, 2.96705972839, 1},
    {{0, 0, 0.2155}, {PI_2, 0, 0}, {0, 0, 1}, -2.09439510239, 2.09439510239, 1},
    {{0, 0.1845, 0}, {-PI_2, PI_, 0}, {0, 0, 1}, -2.96705972839, 2.96705972839, 1},
    {{0, 0, 0.2155}, {PI_2, 0, 0}, {0, 0, 1}, -2.09439510239, 2.09439510239, 1},
    {{0, 0.081, 0}, {-PI_2, PI_, 0}, {0, 0, 1}, -3.05432619099, 3.05432619099, 1},
};

/* data/robots/ur5/ur5_robot.urdf, base_link -> tool0 */
static const ujoint ur5[7] = {
    {{0, 0, 0.089159}, {0, 0, 0}, {0, 0, 1}, -TURN, TURN, 1},
    {{0, 0.13585, 0}, {0, PI_2, 0}, {0, 1, 0}, -TURN, TURN, 1},
    {{0, -0.1197, 0.425}, {0, 0, 0}, {0, 1, 0}, -PI_, PI_, 1},
    {{0, 0, 0.39225}, {0, PI_2, 0}, {0, 1, 0}, -TURN, TURN, 1},
    {{0, 0.093, 0}, {0, 0, 0}, {0, 0, 1}, -TURN, TURN, 1},
    {{0, 0, 0.09465}, {0, 0, 0}, {0, 1, 0}, -TURN, TURN, 1},
    {{0, 0.0823, 0}, {-PI_2, 0, 0}, {0, 0, 1}, 0, 0, 0},
};

/* data/robots/kinova_j2s6s200/j2s6s200.urdf (Kinova Jaco 2 j2s6s200),
 * j2s6s200_link_base -> j2s6s200_end_effector; joints 1, 4 and 6 continuous */
static const ujoint jaco[7] = {
    {{0, 0, 0.15675}, {0, PI_, 0}, {0, 0, 1}, 0, 0, 1},
    {{0, 0.0016, -0.11875}, {-PI_2, 0, PI_}, {0, 0, 1}, 0.820304748437, 5.46288055874, 1},
    {{0, -0.410, 0}, {0, PI_, 0}, {0, 0, 1}, 0.331612557879, 5.9515727493, 1},
    {{0, 0.2073, -0.0114}, {-PI_2, 0, PI_}, {0, 0, 1}, 0, 0, 1},
    {{0, 0, -0.10375}, {PI_2, 0, PI_}, {0, 0, 1}, 0.523598775598, 5.75958653158, 1},
    {{0, 0.10375, 0}, {-PI_2, 0, PI_}, {0, 0, 1}, 0, 0, 1},
    {{0, 0, -0.16}, {PI_, PI_2, 0}, {0, 0, 1}, 0, 0, 0},
};

/* Franka Panda (data/robots/franka_panda/panda.urdf): offsets at the elbow and the wrist,
 * no family */
static const ujoint panda[8] = {
    {{0, 0, 0.333}, {0, 0, 0}, {0, 0, 1}, -2.8973, 2.8973, 1},
    {{0, 0, 0}, {-PI_2, 0, 0}, {0, 0, 1}, -1.7628, 1.7628, 1},
    {{0, -0.316, 0}, {PI_2, 0, 0}, {0, 0, 1}, -2.8973, 2.8973, 1},
    {{0.0825, 0, 0}, {PI_2, 0, 0}, {0, 0, 1}, -3.0718, -0.0698, 1},
    {{-0.0825, 0.384, 0}, {-PI_2, 0, 0}, {0, 0, 1}, -2.8973, 2.8973, 1},
    {{0, 0, 0}, {PI_2, 0, 0}, {0, 0, 1}, -0.0175, 3.7525, 1},
    {{0.088, 0, 0}, {PI_2, 0, 0}, {0, 0, 1}, -2.8973, 2.8973, 1},
    {{0, 0, 0.107}, {0, 0, 0}, {0, 0, 1}, 0, 0, 0},
};

typedef struct arm {
    const char* name;
    const ujoint* js;
    int njs, family;
} arm;

static const arm arms[] = {
    {"iiwa", iiwa, 7, MN_IK_CF_SRS7},
    {"ur5", ur5, 7, MN_IK_CF_UR6},
    {"jaco", jaco, 7, MN_IK_CF_WRIST6},
    {"panda", panda, 8, MN_IK_CF_NONE},
};

static uint64_t rng_state = 77;
static double urand(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* A random chain state within the limits (continuous hinges in [-pi, pi]). */
static void random_q(const mn_chain* ch, double* q) {
    for (int k = 0; k < ch->ndof; k++) {
        double lo = isfinite(ch->lo[k]) ? ch->lo[k] : -MN_PI;
        double hi = isfinite(ch->hi[k]) ? ch->hi[k] : MN_PI;
        q[k] = lo + (hi - lo) * urand();
    }
}

static double xform_dev(const mn_xform* A, const mn_xform* B) {
    double d = mn_vec3_dist(A->p, B->p);
    for (int i = 0; i < 9; i++)
        d = fmax(d, fabs(A->R.m[i] - B->R.m[i]));
    return d;
}

/* Angles equal up to whole turns. */
static double angle_dev(double a, double b) {
    return fabs(remainder(a - b, 2 * MN_PI));
}

/* Each arm's family is found; its product of exponentials is the chain's FK; for random
 * configurations within the limits every answer reproduces the pose and one of them is the
 * configuration itself (with an S-R-S arm's given joint at its value). */
static void test_families_against_fk(void) {
    for (size_t a = 0; a < sizeof arms / sizeof arms[0]; a++) {
        mn_model* m = build(arms[a].name, arms[a].js, arms[a].njs);
        if (!m) continue;
        mn_data* d = mn_data_create(m, 0);
        mn_fk(m, d);
        size_t mark = mn_arena_mark(&d->arena);
        mn_ikc c;
        CHECK(mn_ikc_build(m, d, -1, arms[a].njs - 1, mn_v3(0, 0, 0), 0, &d->arena, &c) == MN_OK);
        mn_ik_cf cf;
        int fam = mn_ik_cf_detect(&c, NULL, NULL, &cf);
        CHECK(fam == arms[a].family);
        if (fam != arms[a].family) fprintf(stderr, "%s: family %d\n", arms[a].name, fam);
        /* the same from the axes of any pose */
        for (int t = 0; t < 20 && c.ax; t++) {
            double q[7];
            random_q(&c.ch, q);
            mn_ikc_fk_axes(&c, q, mn_v3(0, 0, 0), NULL, NULL);
            mn_ik_cf cf2;
            CHECK(mn_ik_cf_detect(&c, c.ax, c.org, &cf2) == fam);
            CHECK(cf2.fixed == cf.fixed && cf2.elbow == cf.elbow);
            if (fam != MN_IK_CF_NONE) CHECK(memcmp(&cf2.M, &cf.M, sizeof cf.M) == 0);
        }
        if (fam != MN_IK_CF_NONE) {
            if (fam == MN_IK_CF_SRS7) CHECK(cf.fixed == 2); /* the third joint, as the arm angle */
            int found_self = 0;
            const int N = 300;
            for (int t = 0; t < N; t++) {
                double q[7], sol[MN_IK_CF_MAX][7];
                random_q(&c.ch, q);
                mn_xform T, P;
                mn_chain_fk(m, &c.ch, q, &T);
                P = mn_ik_cf_fk(&cf, q);
                CHECK(xform_dev(&T, &P) < 1e-12);
                int ns = mn_ik_cf_solve(&cf, &T, cf.fixed >= 0 ? q[cf.fixed] : 0, q[cf.n - 1], sol);
                CHECK(ns >= 1 && ns <= MN_IK_CF_MAX);
                int self = 0;
                for (int s = 0; s < ns; s++) {
                    mn_xform X;
                    mn_chain_fk(m, &c.ch, sol[s], &X);
                    double dev = xform_dev(&X, &T);
                    CHECK(dev < 1e-9);
                    if (dev >= 1e-9)
                        fprintf(stderr, "%s: answer %d off by %g\n", arms[a].name, s, dev);
                    double far = 0;
                    for (int k = 0; k < cf.n; k++) {
                        CHECK(sol[s][k] > -MN_PI - 1e-12 && sol[s][k] <= MN_PI + 1e-12);
                        far = fmax(far, angle_dev(sol[s][k], q[k]));
                    }
                    self |= far < 1e-7;
                }
                found_self += self;
            }
            CHECK(found_self == N);
        }
        mn_arena_reset(&d->arena, mark);
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
}

/* Chains of no family: the Panda (above), a UR5 whose elbow axis is tilted by a
 * hundredth of a radian (joints 2-4 no longer parallel), a Jaco whose wrist centre is
 * moved by a millimetre (axes 4-6 no longer meeting), the first five joints of the UR5 (five
 * DOFs), and the UR5 with its elbow a slide. */
static void test_no_family(void) {
    ujoint tilted[7], moved[7], slide[7];
    memcpy(tilted, ur5, sizeof tilted);
    tilted[2].rpy[0] = 0.01;
    memcpy(moved, jaco, sizeof moved);
    moved[5].xyz[0] = 0.001;
    memcpy(slide, ur5, sizeof slide);
    struct {
        const ujoint* js;
        int n, tip;
        int slide_at;
    } cases[] = {{tilted, 7, 6, -1}, {moved, 7, 6, -1}, {ur5, 7, 4, -1}, {slide, 7, 6, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mn_model* m = build("none", cases[k].js, cases[k].n);
        if (!m) continue;
        if (cases[k].slide_at >= 0) { /* recompile with a slide */
            mn_model_destroy(m);
            mn_spec* s = mn_spec_create("slide");
            char jn[16];
            for (int i = 0; i < cases[k].n; i++) {
                mn_joint_def d = mn_joint_default();
                snprintf(jn, sizeof jn, "j%d", i + 1);
                d.name = jn;
                d.parent = i - 1;
                d.type = i == cases[k].slide_at ? MN_JOINT_SLIDE
                         : cases[k].js[i].hinge ? MN_JOINT_HINGE
                                                : MN_JOINT_FIXED;
                d.offset =
                    mn_v3(cases[k].js[i].xyz[0], cases[k].js[i].xyz[1], cases[k].js[i].xyz[2]);
                d.orient = rpy_quat(cases[k].js[i].rpy);
                d.axis =
                    mn_v3(cases[k].js[i].axis[0], cases[k].js[i].axis[1], cases[k].js[i].axis[2]);
                CHECK(mn_spec_add_joint(s, &d, NULL) == i);
            }
            m = mn_model_compile(s, NULL);
            mn_spec_destroy(s);
            CHECK(m != NULL);
            if (!m) continue;
        }
        mn_data* d = mn_data_create(m, 0);
        mn_fk(m, d);
        mn_ikc c;
        CHECK(mn_ikc_build(m, d, -1, cases[k].tip, mn_v3(0, 0, 0), 0, &d->arena, &c) == MN_OK);
        mn_ik_cf cf;
        CHECK(mn_ik_cf_detect(&c, NULL, NULL, &cf) == MN_IK_CF_NONE);
        if (c.ax) { /* and from the axes of a pose */
            double qa[7] = {0.3, -0.2, 0.9, 1.1, -0.4, 0.5, 0.6};
            mn_ikc_fk_axes(&c, qa, mn_v3(0, 0, 0), NULL, NULL);
            CHECK(mn_ik_cf_detect(&c, c.ax, c.org, &cf) == MN_IK_CF_NONE);
        }
        double q[7] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}, sol[MN_IK_CF_MAX][7];
        mn_xform T = mn_xform_identity();
        CHECK(mn_ik_cf_solve(&cf, &T, 0, 0, sol) == 0);
        (void)q;
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
}

/* LM on the three arms from the middle of the limits: every pose goal met at once (no
 * iteration), within the limits, by the closed form's answer nearest the seed, with no heap
 * allocation; a position-only goal still iterates. */
static void test_lm_takes_closed_form(void) {
    for (size_t a = 0; a < 3; a++) {
        mn_model* m = build(arms[a].name, arms[a].js, arms[a].njs);
        if (!m) continue;
        mn_data* d = mn_data_create(m, 0);
        int tip = arms[a].njs - 1, n = m->nq;
        double seed[7];
        mn_chain ch;
        mn_arena* ar = &d->arena;
        size_t mark = mn_arena_mark(ar);
        CHECK(mn_chain_init(m, -1, tip, ar, &ch) == MN_OK);
        for (int k = 0; k < n; k++)
            seed[k] = isfinite(ch.lo[k]) ? 0.5 * (ch.lo[k] + ch.hi[k]) : 0;
        int zero_iters = 0;
        const int N = 100;
        for (int t = 0; t < N; t++) {
            double q[7];
            random_q(&ch, q);
            mn_xform T;
            mn_chain_fk(m, &ch, q, &T);
            memcpy(d->q, seed, sizeof seed[0] * (size_t)n);
            mn_ik_problem p = mn_ik_problem_default();
            p.tip = tip;
            p.use_orientation = 1;
            /* every other target: an effector point off the tip frame's origin */
            p.point = t % 2 ? mn_v3(0.01, -0.02, 0.05) : mn_v3(0, 0, 0);
            p.target_pos = mn_xform_apply(&T, p.point);
            p.target_rot = mn_quat_from_mat3(&T.R);
            mn_ik_options o = mn_ik_default();
            mn_ik_result r;
            long before = mn_alloc_count();
            CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_OK);
            CHECK(mn_alloc_count() == before);
            CHECK(r.pos_err <= 1e-5 && r.rot_err <= 1e-5);
            CHECK(mn_q_within_limits(m, d->q, 0));
            mn_xform X = d->xf[tip];
            CHECK(mn_vec3_dist(X.p, T.p) <= 1e-5); /* the tip frame where the point puts it */
            zero_iters += r.iterations == 0;
            /* no closed-form answer at the seed's given joint within the limits is nearer */
            size_t mark2 = mn_arena_mark(ar);
            mn_ikc c;
            mn_fk(m, d);
            CHECK(mn_ikc_build(m, d, -1, tip, mn_v3(0, 0, 0), 0, ar, &c) == MN_OK);
            mn_ik_cf cf;
            mn_ik_cf_detect(&c, NULL, NULL, &cf);
            double sol[MN_IK_CF_MAX][7], got = 0;
            for (int k = 0; k < n; k++)
                got += (d->q[k] - seed[k]) * (d->q[k] - seed[k]);
            if (r.iterations == 0 && (cf.fixed < 0 || d->q[cf.fixed] == seed[cf.fixed])) {
                int ns =
                    mn_ik_cf_solve(&cf, &T, cf.fixed >= 0 ? seed[cf.fixed] : 0, seed[n - 1], sol);
                for (int s = 0; s < ns; s++) {
                    double dist = 0;
                    int in = 1;
                    for (int k = 0; k < n; k++) {
                        double v =
                            sol[s][k] + 2 * MN_PI * nearbyint((seed[k] - sol[s][k]) / (2 * MN_PI));
                        if (v < ch.lo[k] || v > ch.hi[k]) in = 0;
                        dist += (v - seed[k]) * (v - seed[k]);
                    }
                    if (in) CHECK(dist >= got - 1e-9);
                }
            }
            mn_arena_reset(ar, mark2);
        }
        CHECK(zero_iters >= N * 95 / 100);
        /* position only: the closed form does not apply, LM iterates */
        double q[7];
        random_q(&ch, q);
        mn_xform T;
        mn_chain_fk(m, &ch, q, &T);
        memcpy(d->q, seed, sizeof seed[0] * (size_t)n);
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = tip;
        p.target_pos = T.p;
        mn_ik_result r;
        CHECK(mn_ik_solve(m, d, &p, NULL, &r) == MN_OK);
        CHECK(r.iterations > 0);
        mn_arena_reset(ar, mark);
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
}

/* Singular poses: the UR5 with its last two axes aligned (wrist 2 at 0, the sixth angle free)
 * and the iiwa stretched straight up (the shoulder's two answers one): LM still meets the
 * goal within the limits. */
static void test_singular_poses(void) {
    for (size_t a = 0; a < 2; a++) {
        mn_model* m = build(arms[a].name, arms[a].js, arms[a].njs);
        if (!m) continue;
        mn_data* d = mn_data_create(m, 0);
        int tip = arms[a].njs - 1, n = m->nq;
        double q[7] = {0.3, -0.7, 0.9, -1.1, 0, 0.4, 0.2};
        if (a == 0) q[1] = q[3] = q[5] = 0; /* iiwa straight */
        memcpy(d->q, q, sizeof q[0] * (size_t)n);
        mn_fk(m, d);
        mn_xform T = d->xf[tip];
        mn_data_reset(m, d);
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = tip;
        p.use_orientation = 1;
        p.target_pos = T.p;
        p.target_rot = mn_quat_from_mat3(&T.R);
        mn_ik_result r;
        CHECK(mn_ik_solve(m, d, &p, NULL, &r) == MN_OK);
        CHECK(r.pos_err <= 1e-5 && r.rot_err <= 1e-5);
        CHECK(mn_q_within_limits(m, d->q, 0));
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
}

/* The searching modes keep the closed form's answers: DISTANCE's answer is no farther from
 * the seed than SPEED's (the closed form's nearest), on the iiwa from random seeds. */
static void test_modes_keep_closed_form(void) {
    mn_model* m = build("iiwa", iiwa, 7);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    mn_chain ch;
    size_t mark = mn_arena_mark(&d->arena);
    CHECK(mn_chain_init(m, -1, 6, &d->arena, &ch) == MN_OK);
    for (int t = 0; t < 10; t++) {
        double seed[7], q[7];
        random_q(&ch, seed);
        random_q(&ch, q);
        mn_xform T;
        mn_chain_fk(m, &ch, q, &T);
        mn_ik_problem p = mn_ik_problem_default();
        p.tip = 6;
        p.use_orientation = 1;
        p.target_pos = T.p;
        p.target_rot = mn_quat_from_mat3(&T.R);
        double dist[2];
        for (int mode = 0; mode < 2; mode++) {
            memcpy(d->q, seed, sizeof seed);
            mn_ik_options o = mn_ik_default();
            o.mode = mode ? MN_IK_DISTANCE : MN_IK_SPEED;
            o.max_restarts = 5;
            mn_ik_result r;
            CHECK(mn_ik_solve(m, d, &p, &o, &r) == MN_OK);
            dist[mode] = 0;
            for (int k = 0; k < 7; k++)
                dist[mode] += (d->q[k] - seed[k]) * (d->q[k] - seed[k]);
        }
        CHECK(dist[1] <= dist[0] + 1e-12);
    }
    mn_arena_reset(&d->arena, mark);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* LM's Jacobian on a robot arm (mn_ikc_jacobian_axes, from the fused walk's axes and
 * origins) equals the frames' (mn_ikc_jacobian after mn_ikc_fk), for pose and position goals,
 * on the Panda and the UR5 (a fixed joint at its tip). */
static void test_fused_jacobian(void) {
    const arm* which[2] = {&arms[3], &arms[1]};
    for (int a = 0; a < 2; a++) {
        mn_model* m = build(which[a]->name, which[a]->js, which[a]->njs);
        if (!m) continue;
        mn_data* d = mn_data_create(m, 0);
        mn_fk(m, d);
        mn_ikc c;
        CHECK(mn_ikc_build(m, d, -1, which[a]->njs - 1, mn_v3(0.01, 0.02, 0.1), 0, &d->arena, &c) ==
              MN_OK);
        CHECK(c.ax != NULL);
        int n = c.ch.ndof;
        for (int t = 0; t < 20; t++) {
            double q[7], J1[6 * 7], J2[6 * 7];
            random_q(&c.ch, q);
            mn_ik_problem p = mn_ik_problem_default();
            p.point = mn_v3(0.01, 0.02, 0.1);
            p.use_orientation = t % 2;
            p.w_rot = 0.7;
            mn_ik_goal g = mn_ik_goal_make(&p, &c);
            mn_xform T1, T2;
            mn_vec3 p1, p2;
            mn_ikc_fk(&c, q, g.point, &T1, &p1);
            mn_ikc_jacobian(&c, &g, p1, J1);
            mn_ikc_fk_axes(&c, q, g.point, &T2, &p2);
            mn_ikc_jacobian_axes(&c, &g, p2, J2);
            CHECK_NEAR(mn_vec3_dist(p1, p2), 0, 1e-15);
            for (int i = 0; i < g.rows * n; i++)
                CHECK_NEAR(J1[i], J2[i], 1e-12);
        }
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_families_against_fk);
    RUN(test_no_family);
    RUN(test_lm_takes_closed_form);
    RUN(test_singular_poses);
    RUN(test_modes_keep_closed_form);
    RUN(test_fused_jacobian);
    return mn_test_report();
}
