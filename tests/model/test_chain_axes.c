/* mn_chain_fk_axes: the tip frame of mn_chain_fk and each DOF's axis and origin in base
 * coordinates from the same walk; the Jacobian they make equals mn_chain_fk_jacobian's and
 * central finite differences of mn_chain_fk, on chains of quarter-turn orientations and
 * coordinate axes (the program's permutation path), general ones (its matrix and Rodrigues
 * paths), with fixed joints and slides between. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <marionette/model.h>

#include "test.h"

static uint64_t rng_state = 11;
static double urand(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static mn_vec3 rand_unit(void) {
    mn_vec3 v = mn_v3(urand() - 0.5, urand() - 0.5, urand() - 0.5);
    return mn_vec3_normalize(v);
}

/* n joints: general (random orientations and axes) or quarter turns about x with z axes;
 * every third a fixed joint, and one slide when slide. */
static mn_model* chain(int n, int general, int slide) {
    mn_spec* s = mn_spec_create("chain");
    char name[16];
    for (int i = 0; i < n; i++) {
        mn_joint_def d = mn_joint_default();
        snprintf(name, sizeof name, "j%d", i);
        d.name = name;
        d.parent = i - 1;
        d.type = i % 3 == 2 ? MN_JOINT_FIXED : MN_JOINT_HINGE;
        if (slide && i == 1) d.type = MN_JOINT_SLIDE;
        d.offset = mn_v3(urand() - 0.5, urand() - 0.5, 0.3 * urand());
        if (general) {
            d.orient = mn_quat_axis_angle(rand_unit(), 3 * urand());
            d.axis = rand_unit();
        } else {
            d.orient = mn_quat_axis_angle(mn_v3(1, 0, 0), (i % 2 ? 0.5 : -0.5) * MN_PI);
        }
        CHECK(mn_spec_add_joint(s, &d, NULL) == i);
    }
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(m != NULL);
    return m;
}

static void check_chain(mn_model* m) {
    mn_error err;
    mn_chain* c = mn_chain_create(m, -1, m->njoint - 1, &err);
    CHECK(c != NULL);
    if (!c) return;
    int n = c->ndof;
    double q[32], ax[96], org[96], J[6 * 32];
    CHECK(n <= 32);
    for (int t = 0; t < 50; t++) {
        for (int k = 0; k < n; k++)
            q[k] = 2 * MN_PI * (urand() - 0.5);
        mn_xform T, T2;
        mn_chain_fk(m, c, q, &T);
        mn_chain_fk_axes(m, c, q, &T2, ax, org);
        for (int i = 0; i < 9; i++)
            CHECK_NEAR(T2.R.m[i], T.R.m[i], 1e-15);
        CHECK_NEAR(mn_vec3_dist(T2.p, T.p), 0, 1e-15);
        mn_chain_fk_jacobian(m, c, q, mn_v3(0, 0, 0), &T2, J);
        for (int k = 0; k < n; k++) {
            mn_vec3 a = mn_v3(ax[3 * k], ax[3 * k + 1], ax[3 * k + 2]);
            mn_vec3 o = mn_v3(org[3 * k], org[3 * k + 1], org[3 * k + 2]);
            CHECK_NEAR(mn_vec3_norm(a), 1, 1e-12);
            int j = c->jnt[c->dof_path[k]];
            int hinge = m->jnt_type[j] == MN_JOINT_HINGE;
            mn_vec3 lin = hinge ? mn_vec3_cross(a, mn_vec3_sub(T.p, o)) : a;
            mn_vec3 ang = hinge ? a : mn_v3(0, 0, 0);
            double col[6] = {lin.x, lin.y, lin.z, ang.x, ang.y, ang.z};
            /* the same columns as mn_chain_fk_jacobian's */
            for (int r = 0; r < 6; r++)
                CHECK_NEAR(col[r], J[r * n + k], 1e-12);
            /* and central differences of the FK: the position's derivative, and the rotation's
             * (R' R^T, a skew matrix of the angular column) */
            const double h = 1e-6;
            double qp[32], qm[32];
            memcpy(qp, q, sizeof(double) * (size_t)n);
            memcpy(qm, q, sizeof(double) * (size_t)n);
            qp[k] += h, qm[k] -= h;
            mn_xform Tp, Tm;
            mn_chain_fk(m, c, qp, &Tp);
            mn_chain_fk(m, c, qm, &Tm);
            mn_vec3 dp = mn_vec3_scale(mn_vec3_sub(Tp.p, Tm.p), 0.5 / h);
            CHECK_NEAR(mn_vec3_dist(dp, lin), 0, 1e-7);
            double dR[9];
            for (int i = 0; i < 9; i++)
                dR[i] = (Tp.R.m[i] - Tm.R.m[i]) * 0.5 / h;
            double W[9]; /* dR R^T */
            for (int r = 0; r < 3; r++)
                for (int s = 0; s < 3; s++)
                    W[3 * r + s] = dR[3 * r] * T.R.m[3 * s] + dR[3 * r + 1] * T.R.m[3 * s + 1] +
                                   dR[3 * r + 2] * T.R.m[3 * s + 2];
            CHECK_NEAR(W[7], ang.x, 1e-7);
            CHECK_NEAR(W[2], ang.y, 1e-7);
            CHECK_NEAR(W[3], ang.z, 1e-7);
        }
    }
    mn_chain_destroy(c);
}

static void test_axes_quarter_turns(void) {
    mn_model* m = chain(10, 0, 0);
    if (m) check_chain(m);
    mn_model_destroy(m);
}

static void test_axes_general(void) {
    mn_model* m = chain(10, 1, 0);
    if (m) check_chain(m);
    mn_model_destroy(m);
}

static void test_axes_with_slide(void) {
    mn_model* m = chain(8, 1, 1);
    if (m) check_chain(m);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_axes_quarter_turns);
    RUN(test_axes_general);
    RUN(test_axes_with_slide);
    return mn_test_report();
}
