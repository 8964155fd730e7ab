/* Model layer: compile checks, forward kinematics against an independent quaternion-based
 * implementation, every Jacobian against finite differences, state operations, limits. */
#include <marionette/model.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static uint64_t rng_state = 12345;
static double urand(void) { /* splitmix64 -> [0, 1) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) {
    return 2 * urand() - 1;
}
static mn_quat rand_quat(void) {
    return mn_quat_normalize(mn_q4(srand1(), srand1(), srand1(), srand1()));
}

/* A random tree of n joints mixing every type, spec order shuffled relative to preorder
 * only through parents chosen among earlier joints. */
static mn_spec* random_spec(int n, int with_free_root) {
    mn_spec* s = mn_spec_create("random");
    char name[32];
    for (int i = 0; i < n; i++) {
        mn_joint_def d = mn_joint_default();
        snprintf(name, sizeof name, "j%d", i);
        d.name = name;
        d.parent = i == 0 ? -1 : (int)(urand() * i);
        int t = i == 0 ? (with_free_root ? MN_JOINT_FREE : MN_JOINT_HINGE) : 1 + (int)(urand() * 4);
        if (i > 0 && t == MN_JOINT_FREE) t = MN_JOINT_HINGE; /* only the root is free */
        if (i > 0 && urand() < 0.1) t = MN_JOINT_FIXED;
        d.type = (mn_joint_type)t;
        d.offset = mn_v3(srand1(), srand1(), srand1());
        if (urand() < 0.5) d.orient = rand_quat();
        double r = urand();
        d.axis = r < 0.2   ? mn_v3(1, 0, 0)
                 : r < 0.4 ? mn_v3(0, -1, 0)
                           : mn_v3(srand1(), srand1(), srand1());
        d.mass = urand() < 0.8 ? 0.5 + urand() : 0;
        d.com = mn_v3(srand1() * 0.2, srand1() * 0.2, srand1() * 0.2);
        CHECK(mn_spec_add_joint(s, &d, NULL) == i);
    }
    return s;
}

static void random_q(const mn_model* m, double* q) {
    for (int j = 0; j < m->njoint; j++) {
        double* qj = q + m->jnt_qadr[j];
        switch (m->jnt_type[j]) {
        case MN_JOINT_HINGE:
            qj[0] = 3 * srand1();
            break;
        case MN_JOINT_SLIDE:
            qj[0] = srand1();
            break;
        case MN_JOINT_BALL: {
            mn_quat r = rand_quat();
            qj[0] = r.w, qj[1] = r.x, qj[2] = r.y, qj[3] = r.z;
            break;
        }
        case MN_JOINT_FREE: {
            mn_quat r = rand_quat();
            qj[0] = srand1(), qj[1] = srand1(), qj[2] = srand1();
            qj[3] = r.w, qj[4] = r.x, qj[5] = r.y, qj[6] = r.z;
            break;
        }
        default:
            break;
        }
    }
}

/* Independent FK: rotations as quaternions, composed recursively through parents. */
static void ref_frame(const mn_model* m, const double* q, int j, mn_quat* R, mn_vec3* p) {
    mn_quat PR = mn_quat_identity();
    mn_vec3 Pp = mn_v3(0, 0, 0);
    if (m->jnt_parent[j] >= 0) ref_frame(m, q, m->jnt_parent[j], &PR, &Pp);
    const double* qj = q + m->jnt_qadr[j];
    mn_vec3 off = m->jnt_offset[j];
    int t = m->jnt_type[j];
    if (t == MN_JOINT_FREE) off = mn_vec3_add(off, mn_v3(qj[0], qj[1], qj[2]));
    *p = mn_vec3_add(Pp, mn_quat_rotate(PR, off));
    mn_quat O = mn_quat_mul(PR, m->jnt_orient[j]);
    mn_vec3 ax = m->jnt_axis[j];
    if (t == MN_JOINT_HINGE) {
        double h = 0.5 * qj[0];
        O = mn_quat_mul(O, mn_q4(cos(h), sin(h) * ax.x, sin(h) * ax.y, sin(h) * ax.z));
    } else if (t == MN_JOINT_SLIDE) {
        *p = mn_vec3_add(*p, mn_quat_rotate(O, mn_vec3_scale(ax, qj[0])));
    } else if (t == MN_JOINT_BALL) {
        O = mn_quat_mul(O, mn_quat_normalize(mn_q4(qj[0], qj[1], qj[2], qj[3])));
    } else if (t == MN_JOINT_FREE) {
        O = mn_quat_mul(O, mn_quat_normalize(mn_q4(qj[3], qj[4], qj[5], qj[6])));
    }
    *R = O;
}

static void test_compile_errors(void) {
    mn_error err;
    mn_spec* s = mn_spec_create("bad");
    mn_joint_def d = mn_joint_default();
    d.name = "a";
    CHECK(mn_spec_add_joint(s, &d, &err) == 0);
    CHECK(mn_spec_add_joint(s, &d, &err) == -1 && strstr(err.message, "duplicate"));
    d.name = "b";
    d.parent = 5;
    CHECK(mn_spec_add_joint(s, &d, &err) == -1 && strstr(err.message, "parent"));
    d.parent = 0;
    d.type = MN_JOINT_HINGE;
    d.axis = mn_v3(0, 0, 0);
    CHECK(mn_spec_add_joint(s, &d, &err) == -1 && strstr(err.message, "axis"));
    d.axis = mn_v3(1, 0, 0);
    d.offset.y = NAN;
    CHECK(mn_spec_add_joint(s, &d, &err) == -1 && strstr(err.message, "offset"));
    d.offset.y = 0;
    d.limited = 1;
    d.range[0] = 1, d.range[1] = -1;
    CHECK(mn_spec_add_joint(s, &d, &err) == -1 && strstr(err.message, "limits"));
    d.limited = 0;
    d.mass = -1;
    CHECK(mn_spec_add_joint(s, &d, &err) == -1 && strstr(err.message, "mass"));
    d.mass = 0;
    d.name = "";
    CHECK(mn_spec_add_joint(s, &d, &err) == -1);
    d.name = "b";
    CHECK(mn_spec_add_joint(s, &d, &err) == 1);
    d.name = "c";
    d.parent = 1;
    CHECK(mn_spec_add_joint(s, &d, &err) == 2);
    /* make a cycle by editing in place: a -> c */
    mn_spec_joint(s, 0)->parent = 2;
    mn_model* m = mn_model_compile(s, &err);
    CHECK(m == NULL && strstr(err.message, "cycle"));
    mn_spec_joint(s, 0)->parent = -1;
    m = mn_model_compile(s, &err);
    CHECK(m != NULL);
    if (m) {
        CHECK(m->njoint == 3 && m->nq == 2 && m->nv == 2);
        CHECK(mn_model_find_joint(m, "c") == 2);
        CHECK(mn_model_is_ancestor(m, 0, 2) && !mn_model_is_ancestor(m, 2, 0));
    }
    mn_model_destroy(m);
    mn_spec_destroy(s);
    CHECK(mn_model_compile(NULL, &err) == NULL);
}

static void test_preorder_and_layout(void) {
    /* Spec order that is not a preorder: the compiled model must put parents first and make
     * subtrees contiguous. */
    mn_spec* s = mn_spec_create("order");
    const char* names[] = {"root", "a", "b", "a1", "b1", "a2"};
    int parents[] = {-1, 0, 0, 1, 2, 3};
    int types[] = {MN_JOINT_FREE,  MN_JOINT_BALL,  MN_JOINT_HINGE,
                   MN_JOINT_SLIDE, MN_JOINT_FIXED, MN_JOINT_HINGE};
    for (int i = 0; i < 6; i++) {
        mn_joint_def d = mn_joint_default();
        d.name = names[i];
        d.parent = parents[i];
        d.type = (mn_joint_type)types[i];
        CHECK(mn_spec_add_joint(s, &d, NULL) == i);
    }
    mn_model* m = mn_model_compile(s, NULL);
    CHECK(m != NULL);
    if (!m) return;
    CHECK(m->nq == 7 + 4 + 1 + 1 + 1 && m->nv == 6 + 3 + 1 + 1 + 1);
    const char* expect[] = {"root", "a", "a1", "a2", "b", "b1"};
    for (int j = 0; j < 6; j++) {
        CHECK(!strcmp(m->jnt_name[j], expect[j]));
        CHECK(m->jnt_parent[j] < j);
    }
    CHECK(m->jnt_subtree_end[0] == 6 && m->jnt_subtree_end[1] == 4 && m->jnt_subtree_end[4] == 6);
    /* rest state: identity quaternions */
    CHECK(m->q0[3] == 1.0 && m->q0[7] == 1.0);
    mn_spec* back = mn_model_decompile(m);
    mn_model* m2 = mn_model_compile(back, NULL);
    CHECK(m2 && m2->njoint == 6 && m2->nq == m->nq && !strcmp(m2->jnt_name[5], "b1"));
    mn_model_destroy(m2);
    mn_spec_destroy(back);
    mn_model_destroy(m);
    mn_spec_destroy(s);
}

static void test_fk_against_reference(void) {
    for (int trial = 0; trial < 20; trial++) {
        mn_spec* s = random_spec(12 + trial, trial % 2);
        mn_model* m = mn_model_compile(s, NULL);
        CHECK(m != NULL);
        if (!m) return;
        mn_data* d = mn_data_create(m, 0);
        random_q(m, d->q);
        long before = mn_alloc_count();
        mn_fk(m, d);
        CHECK(mn_alloc_count() == before);
        for (int j = 0; j < m->njoint; j++) {
            mn_quat Rq;
            mn_vec3 p;
            ref_frame(m, d->q, j, &Rq, &p);
            mn_mat3 R = mn_quat_to_mat3(Rq);
            CHECK(mn_vec3_dist(p, d->xf[j].p) < 1e-12);
            for (int k = 0; k < 9; k++)
                CHECK_NEAR(R.m[k], d->xf[j].R.m[k], 1e-12);
        }
        mn_data_destroy(d);
        mn_model_destroy(m);
        mn_spec_destroy(s);
    }
}

/* Finite differences of a point's position and the frame's rotation along each DOF,
 * stepping with mn_integrate (the manifold step the Jacobian is defined for). */
static void fd_jacobian(const mn_model* m, mn_data* d, int joint, mn_vec3 local, double* J) {
    const double h = 1e-6;
    int nv = m->nv;
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    double* v = calloc((size_t)nv, sizeof(double));
    memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < nv; k++) {
        mn_vec3 pp, pm;
        mn_mat3 Rp, Rm;
        v[k] = 1;
        memcpy(d->q, q0, sizeof(double) * (size_t)m->nq);
        mn_integrate(m, d->q, v, h);
        mn_fk(m, d);
        pp = mn_point_world(d, joint, local);
        Rp = d->xf[joint].R;
        memcpy(d->q, q0, sizeof(double) * (size_t)m->nq);
        mn_integrate(m, d->q, v, -h);
        mn_fk(m, d);
        pm = mn_point_world(d, joint, local);
        Rm = d->xf[joint].R;
        v[k] = 0;
        mn_vec3 lin = mn_vec3_scale(mn_vec3_sub(pp, pm), 0.5 / h);
        mn_vec3 ang = mn_vec3_scale(mn_rotation_error(&Rp, &Rm), 0.5 / h);
        J[0 * nv + k] = lin.x, J[1 * nv + k] = lin.y, J[2 * nv + k] = lin.z;
        J[3 * nv + k] = ang.x, J[4 * nv + k] = ang.y, J[5 * nv + k] = ang.z;
    }
    memcpy(d->q, q0, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    free(q0);
    free(v);
}

static void test_jacobian_fd(void) {
    for (int trial = 0; trial < 10; trial++) {
        mn_spec* s = random_spec(10, 1);
        mn_model* m = mn_model_compile(s, NULL);
        mn_data* d = mn_data_create(m, 0);
        random_q(m, d->q);
        mn_fk(m, d);
        int nv = m->nv;
        double* J = malloc(sizeof(double) * 6 * (size_t)nv);
        double* F = malloc(sizeof(double) * 6 * (size_t)nv);
        for (int j = 0; j < m->njoint; j++) {
            mn_vec3 local = mn_v3(srand1(), srand1(), srand1());
            long before = mn_alloc_count();
            mn_jacobian(m, d, j, local, J);
            CHECK(mn_alloc_count() == before);
            fd_jacobian(m, d, j, local, F);
            double worst = 0;
            for (int i = 0; i < 6 * nv; i++)
                worst = fmax(worst, fabs(J[i] - F[i]));
            CHECK(worst < 1e-7);
            /* chain Jacobian = the chain's columns of the full one */
            int base = m->jnt_parent[j] >= 0 ? m->jnt_parent[m->jnt_parent[j]] : -1;
            if (base < 0) base = -1;
            int dofs[64];
            int n = mn_chain_dofs(m, base, j, dofs, 64);
            CHECK(n >= 0);
            if (n > 0) {
                double Jc[6 * 64];
                mn_jacobian_chain(m, d, base, j, local, Jc);
                for (int r = 0; r < 6; r++)
                    for (int c = 0; c < n; c++)
                        CHECK_NEAR(Jc[r * n + c], J[r * nv + dofs[c]], 1e-14);
            }
        }
        free(J);
        free(F);
        mn_data_destroy(d);
        mn_model_destroy(m);
        mn_spec_destroy(s);
    }
}

static void test_com_jacobian_fd(void) {
    mn_spec* s = random_spec(15, 1);
    mn_model* m = mn_model_compile(s, NULL);
    mn_data* d = mn_data_create(m, 0);
    random_q(m, d->q);
    mn_fk(m, d);
    int nv = m->nv;
    double* J = malloc(sizeof(double) * 3 * (size_t)nv);
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    double* v = calloc((size_t)nv, sizeof(double));
    for (int root = -1; root < m->njoint; root += 3) {
        double M;
        mn_com(m, d, root, &M);
        mn_com_jacobian(m, d, root, J);
        memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
        double worst = 0;
        for (int k = 0; k < nv; k++) {
            const double h = 1e-6;
            v[k] = 1;
            mn_integrate(m, d->q, v, h);
            mn_fk(m, d);
            mn_vec3 cp = mn_com(m, d, root, NULL);
            memcpy(d->q, q0, sizeof(double) * (size_t)m->nq);
            mn_integrate(m, d->q, v, -h);
            mn_fk(m, d);
            mn_vec3 cm = mn_com(m, d, root, NULL);
            memcpy(d->q, q0, sizeof(double) * (size_t)m->nq);
            v[k] = 0;
            mn_vec3 g = mn_vec3_scale(mn_vec3_sub(cp, cm), 0.5 / h);
            worst = fmax(worst, fabs(g.x - J[k]));
            worst = fmax(worst, fabs(g.y - J[nv + k]));
            worst = fmax(worst, fabs(g.z - J[2 * nv + k]));
        }
        mn_fk(m, d);
        CHECK(worst < 1e-7);
    }
    /* whole-figure centre of mass by brute force */
    double M = 0;
    mn_vec3 c = {0, 0, 0};
    for (int j = 0; j < m->njoint; j++) {
        c = mn_vec3_madd(c, m->jnt_mass[j], mn_xform_apply(&d->xf[j], m->jnt_com[j]));
        M += m->jnt_mass[j];
    }
    double Mc;
    mn_vec3 com = mn_com(m, d, -1, &Mc);
    CHECK_NEAR(Mc, M, 1e-12);
    CHECK(mn_vec3_dist(com, mn_vec3_scale(c, 1 / M)) < 1e-12);
    CHECK_NEAR(m->total_mass, M, 1e-12);
    free(J);
    free(q0);
    free(v);
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_spec_destroy(s);
}

/* A 7-DOF spatial arm of hinges (with a fixed tool frame), for the chain fast path. */
static mn_model* arm7(void) {
    mn_spec* s = mn_spec_create("arm7");
    const char* names[] = {"base", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "tool"};
    mn_vec3 axes[] = {{0, 0, 1}, {0, 1, 0}, {0, 0, 1}, {0, -1, 0}, {0, 0, 1}, {1, 1, 0}, {0, 0, 1}};
    for (int i = 0; i < 9; i++) {
        mn_joint_def d = mn_joint_default();
        d.name = names[i];
        d.parent = i - 1;
        d.type = (i == 0 || i == 8) ? MN_JOINT_FIXED : MN_JOINT_HINGE;
        if (i >= 1 && i <= 7) {
            d.axis = axes[i - 1];
            d.limited = 1;
            d.range[0] = -2.8, d.range[1] = 2.8;
        }
        d.offset = i == 0 ? mn_v3(0, 0, 0) : mn_v3(0.01 * i, 0.02, 0.3);
        if (i == 4) d.orient = mn_quat_axis_angle(mn_v3(1, 0, 0), 0.7);
        mn_spec_add_joint(s, &d, NULL);
    }
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

static void test_chain(void) {
    mn_model* m = arm7();
    CHECK(m != NULL);
    if (!m) return;
    mn_error err;
    mn_chain* c = mn_chain_create(m, 0, 8, &err);
    CHECK(c && c->ndof == 7 && c->njoint == 8);
    CHECK(mn_chain_create(m, 8, 0, &err) == NULL && strstr(err.message, "not below"));
    mn_data* d = mn_data_create(m, 0);
    for (int trial = 0; trial < 50; trial++) {
        double qc[7];
        for (int i = 0; i < 7; i++)
            qc[i] = d->q[c->qadr[i]] = 2.5 * srand1();
        mn_fk(m, d);
        mn_xform T, T2;
        double J[6 * 7], Jfull[6 * 7];
        long before = mn_alloc_count();
        mn_chain_fk(m, c, qc, &T);
        mn_vec3 local = mn_v3(0.1, 0.2, 0.05);
        mn_chain_fk_jacobian(m, c, qc, local, &T2, J);
        CHECK(mn_alloc_count() == before);
        /* base is at the origin with identity rotation, so base frame = world frame */
        CHECK(mn_vec3_dist(T.p, d->xf[8].p) < 1e-12 && mn_vec3_dist(T2.p, T.p) == 0);
        for (int k = 0; k < 9; k++)
            CHECK_NEAR(T.R.m[k], d->xf[8].R.m[k], 1e-12);
        mn_jacobian_chain(m, d, 0, 8, local, Jfull);
        for (int k = 0; k < 42; k++)
            CHECK_NEAR(J[k], Jfull[k], 1e-12);
    }
    mn_chain_destroy(c);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* The partial forward kinematics (subtree, path, one joint, a hinge path) agree with mn_fk. */
static void test_partial_fk(void) {
    mn_spec* s = random_spec(20, 1);
    mn_model* m = mn_model_compile(s, NULL);
    mn_data* d = mn_data_create(m, 0);
    mn_data* ref = mn_data_create(m, 0);
    random_q(m, d->q);
    memcpy(ref->q, d->q, sizeof(double) * (size_t)m->nq);
    mn_fk(m, ref);
    /* path: the ancestors of the deepest joint only */
    int deep = 0;
    for (int j = 0; j < m->njoint; j++)
        if (m->jnt_depth[j] > m->jnt_depth[deep]) deep = j;
    memset(d->xf, 0, sizeof(mn_xform) * (size_t)m->njoint);
    mn_fk_path(m, d, deep);
    for (int k = deep; k >= 0; k = m->jnt_parent[k])
        CHECK(mn_vec3_dist(d->xf[k].p, ref->xf[k].p) < 1e-14);
    /* subtree: a change of one joint's state, recomputed below it only */
    mn_fk(m, d);
    int j = m->jnt_parent[deep] > 0 ? m->jnt_parent[deep] : deep;
    for (int i = 0; i < mn_joint_type_nq((mn_joint_type)m->jnt_type[j]) && i < 3; i++) {
        d->q[m->jnt_qadr[j] + i] += 0.1;
        ref->q[m->jnt_qadr[j] + i] += 0.1;
    }
    mn_fk(m, ref);
    mn_fk_subtree(m, d, j);
    for (int k = 0; k < m->njoint; k++) {
        CHECK(mn_vec3_dist(d->xf[k].p, ref->xf[k].p) < 1e-12);
        for (int e = 0; e < 9; e++)
            CHECK_NEAR(d->xf[k].R.m[e], ref->xf[k].R.m[e], 1e-12);
    }
    /* one joint at a time from its parent frame */
    for (int k = 0; k < m->njoint; k++) {
        mn_xform X = m->jnt_parent[k] >= 0 ? ref->xf[m->jnt_parent[k]] : mn_xform_identity();
        mn_joint_apply(m, k, ref->q + m->jnt_qadr[k], &X);
        CHECK(mn_vec3_dist(X.p, ref->xf[k].p) < 1e-14);
    }
    mn_data_destroy(d);
    mn_data_destroy(ref);
    mn_model_destroy(m);
    mn_spec_destroy(s);
    /* a hinge path relative to its base: the same as the chain fast path and as mn_fk */
    m = arm7();
    d = mn_data_create(m, 0);
    mn_chain* c = mn_chain_create(m, 0, 8, NULL);
    double qc[7];
    for (int i = 0; i < 7; i++)
        qc[i] = d->q[c->qadr[i]] = 2.5 * srand1();
    mn_fk(m, d);
    mn_xform frames[8], T;
    long before = mn_alloc_count();
    mn_path_fk(m, c->jnt, c->njoint, qc, frames);
    mn_chain_fk(m, c, qc, &T);
    CHECK(mn_alloc_count() == before);
    for (int i = 0; i < c->njoint; i++)
        CHECK(mn_vec3_dist(frames[i].p, d->xf[c->jnt[i]].p) < 1e-12);
    CHECK(mn_vec3_dist(frames[7].p, T.p) == 0);
    mn_chain_destroy(c);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

static void test_state_ops(void) {
    mn_spec* s = random_spec(12, 1);
    mn_model* m = mn_model_compile(s, NULL);
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    double* q1 = malloc(sizeof(double) * (size_t)m->nq);
    double* v = malloc(sizeof(double) * (size_t)m->nv);
    double* w = malloc(sizeof(double) * (size_t)m->nv);
    random_q(m, q0);
    for (int i = 0; i < m->nv; i++)
        v[i] = 0.3 * srand1();
    memcpy(q1, q0, sizeof(double) * (size_t)m->nq);
    mn_integrate(m, q1, v, 1.0);
    mn_q_difference(m, q1, q0, w);
    for (int i = 0; i < m->nv; i++)
        CHECK_NEAR(w[i], v[i], 1e-12);
    CHECK(mn_q_check(m, q1) == MN_OK);
    q1[0] = NAN;
    CHECK(mn_q_check(m, q1) == MN_ERR_ARG);
    free(q0);
    free(q1);
    free(v);
    free(w);
    mn_model_destroy(m);
    mn_spec_destroy(s);
}

/* A free root placed by a rigid motion P: every joint's frame becomes P times the old one
 * (random trees with random offsets and orientations at the root). */
static void test_free_joint_place(void) {
    for (int trial = 0; trial < 20; trial++) {
        mn_spec* s = random_spec(10, 1);
        mn_model* m = mn_model_compile(s, NULL);
        mn_data* d = mn_data_create(m, 0);
        random_q(m, d->q);
        mn_fk(m, d);
        mn_xform* before = malloc(sizeof(mn_xform) * (size_t)m->njoint);
        memcpy(before, d->xf, sizeof(mn_xform) * (size_t)m->njoint);
        mn_xform P;
        P.R = mn_quat_to_mat3(rand_quat());
        P.p = mn_v3(srand1(), srand1(), srand1());
        mn_free_joint_place(m, 0, &P, d->q + m->jnt_qadr[0]);
        CHECK(mn_q_check(m, d->q) == MN_OK);
        mn_fk(m, d);
        double worst = 0;
        for (int j = 0; j < m->njoint; j++) {
            mn_xform want = mn_xform_mul(&P, &before[j]);
            for (int k = 0; k < 9; k++)
                worst = fmax(worst, fabs(d->xf[j].R.m[k] - want.R.m[k]));
            worst = fmax(worst, mn_vec3_norm(mn_vec3_sub(d->xf[j].p, want.p)));
        }
        CHECK(worst < 1e-12);
        free(before);
        mn_data_destroy(d);
        mn_model_destroy(m);
        mn_spec_destroy(s);
    }
}

static void test_limits(void) {
    mn_spec* s = mn_spec_create("limits");
    mn_joint_def d = mn_joint_default();
    d.name = "ball";
    d.type = MN_JOINT_BALL;
    d.axis = mn_v3(0, 1, 0);
    d.limited = 1;
    d.swing = 0.5;
    d.twist[0] = -0.2, d.twist[1] = 0.3;
    mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.name = "hinge";
    d.parent = 0;
    d.type = MN_JOINT_HINGE;
    d.limited = 1;
    d.range[0] = -1, d.range[1] = 0.5;
    mn_spec_add_joint(s, &d, NULL);
    mn_model* m = mn_model_compile(s, NULL);
    double q[5];
    for (int trial = 0; trial < 500; trial++) {
        mn_quat r = rand_quat();
        q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
        q[4] = 3 * srand1();
        mn_clamp_to_limits(m, q);
        CHECK(mn_q_within_limits(m, q, 1e-9));
        CHECK(q[4] >= -1 && q[4] <= 0.5);
        /* a state within limits is left alone */
        double before[5];
        memcpy(before, q, sizeof q);
        mn_clamp_to_limits(m, q);
        for (int i = 0; i < 5; i++)
            CHECK_NEAR(q[i], before[i], 1e-12);
    }
    /* twist of 0.25 about y and swing of 0.4 about x: inside */
    mn_quat in = mn_quat_mul(mn_quat_axis_angle(mn_v3(1, 0, 0), 0.4),
                             mn_quat_axis_angle(mn_v3(0, 1, 0), 0.25));
    q[0] = in.w, q[1] = in.x, q[2] = in.y, q[3] = in.z, q[4] = 0;
    CHECK(mn_q_within_limits(m, q, 1e-9));
    mn_quat out = mn_quat_mul(mn_quat_axis_angle(mn_v3(1, 0, 0), 0.6),
                              mn_quat_axis_angle(mn_v3(0, 1, 0), 0.25));
    q[0] = out.w, q[1] = out.x, q[2] = out.y, q[3] = out.z;
    CHECK(!mn_q_within_limits(m, q, 1e-9));
    mn_clamp_to_limits(m, q);
    mn_quat expect = mn_quat_mul(mn_quat_axis_angle(mn_v3(1, 0, 0), 0.5),
                                 mn_quat_axis_angle(mn_v3(0, 1, 0), 0.25));
    CHECK(mn_quat_angle_between(mn_q4(q[0], q[1], q[2], q[3]), expect) < 1e-12);
    mn_model_destroy(m);
    mn_spec_destroy(s);
}

static void test_fk_never_nan(void) {
    mn_spec* s = random_spec(6, 1);
    mn_model* m = mn_model_compile(s, NULL);
    mn_data* d = mn_data_create(m, 0);
    for (int i = 3; i < 7; i++)
        d->q[i] = 0; /* zero root quaternion */
    mn_fk(m, d);
    for (int j = 0; j < m->njoint; j++)
        CHECK(mn_vec3_isfinite(d->xf[j].p));
    CHECK(d->q[3] == 1.0);
    mn_data_destroy(d);
    mn_model_destroy(m);
    mn_spec_destroy(s);
}

/* ---- per-joint primitives ---------------------------------------------------------------- */

/* A fixed root at a random placement, one joint of type t at a random placement with a
 * random axis, and a fixed end frame carrying the point. */
static mn_model* one_joint_model(mn_joint_type t, int limited) {
    mn_spec* s = mn_spec_create("one");
    mn_joint_def d = mn_joint_default();
    d.name = "root";
    d.offset = mn_v3(srand1(), srand1(), srand1());
    d.orient = rand_quat();
    int r = mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.name = "j";
    d.parent = r;
    d.type = t;
    d.offset = mn_v3(srand1(), srand1(), srand1());
    d.orient = rand_quat();
    d.axis = mn_vec3_normalize(mn_v3(srand1(), srand1(), srand1()));
    d.limited = limited;
    d.range[0] = -0.5, d.range[1] = 0.7;
    d.swing = 0.6;
    d.twist[0] = -0.4, d.twist[1] = 0.3;
    int j = mn_spec_add_joint(s, &d, NULL);
    d = mn_joint_default();
    d.name = "end";
    d.parent = j;
    d.offset = mn_v3(srand1(), srand1(), srand1());
    d.orient = rand_quat();
    mn_spec_add_joint(s, &d, NULL);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

/* mn_joint_jacobian_columns against central differences of the end frame's point and
 * rotation, stepping the joint alone with mn_joint_integrate, for every moving type. */
static void test_joint_columns_fd(void) {
    const mn_joint_type types[4] = {MN_JOINT_HINGE, MN_JOINT_SLIDE, MN_JOINT_BALL, MN_JOINT_FREE};
    for (int ti = 0; ti < 4; ti++) {
        for (int trial = 0; trial < 5; trial++) {
            mn_model* m = one_joint_model(types[ti], 0);
            CHECK(m != NULL);
            if (!m) continue;
            mn_data* d = mn_data_create(m, 0);
            int j = mn_model_find_joint(m, "j"), e = mn_model_find_joint(m, "end");
            random_q(m, d->q);
            mn_fk(m, d);
            mn_vec3 local = mn_v3(srand1(), srand1(), srand1());
            mn_vec3 P = mn_point_world(d, e, local), lin[6], ang[6];
            int nv =
                mn_joint_jacobian_columns(m, j, &d->xf[j], &d->xf[m->jnt_parent[j]].R, P, lin, ang);
            CHECK(nv == mn_joint_type_nv(types[ti]));
            double q0[7];
            memcpy(q0, d->q + m->jnt_qadr[j], sizeof(double) * (size_t)mn_joint_type_nq(types[ti]));
            const double h = 1e-6;
            for (int k = 0; k < nv; k++) {
                double v[6] = {0, 0, 0, 0, 0, 0};
                v[k] = 1;
                mn_vec3 pp, pm;
                mn_mat3 Rp, Rm;
                memcpy(d->q + m->jnt_qadr[j], q0,
                       sizeof q0[0] * (size_t)mn_joint_type_nq(types[ti]));
                mn_joint_integrate(types[ti], d->q + m->jnt_qadr[j], v, h);
                mn_fk(m, d);
                pp = mn_point_world(d, e, local), Rp = d->xf[e].R;
                memcpy(d->q + m->jnt_qadr[j], q0,
                       sizeof q0[0] * (size_t)mn_joint_type_nq(types[ti]));
                mn_joint_integrate(types[ti], d->q + m->jnt_qadr[j], v, -h);
                mn_fk(m, d);
                pm = mn_point_world(d, e, local), Rm = d->xf[e].R;
                mn_vec3 fl = mn_vec3_scale(mn_vec3_sub(pp, pm), 0.5 / h);
                mn_vec3 fa = mn_vec3_scale(mn_rotation_error(&Rp, &Rm), 0.5 / h);
                CHECK(mn_vec3_dist(fl, lin[k]) < 1e-6);
                CHECK(mn_vec3_dist(fa, ang[k]) < 1e-6);
            }
            mn_data_destroy(d);
            mn_model_destroy(m);
        }
    }
}

/* mn_joint_integrate then mn_q_difference gives the velocity back; quaternions stay unit. */
static void test_joint_integrate(void) {
    for (int trial = 0; trial < 20; trial++) {
        mn_spec* s = random_spec(6, 1);
        mn_model* m = mn_model_compile(s, NULL);
        mn_spec_destroy(s);
        double* q0 = malloc(sizeof(double) * (size_t)m->nq);
        double* q1 = malloc(sizeof(double) * (size_t)m->nq);
        double* v = malloc(sizeof(double) * (size_t)m->nv);
        double* w = malloc(sizeof(double) * (size_t)m->nv);
        random_q(m, q0);
        for (int k = 0; k < m->nv; k++)
            v[k] = 0.5 * srand1();
        memcpy(q1, q0, sizeof(double) * (size_t)m->nq);
        for (int j = 0; j < m->njoint; j++)
            mn_joint_integrate((mn_joint_type)m->jnt_type[j], q1 + m->jnt_qadr[j],
                               v + m->jnt_dofadr[j], 0.8);
        mn_q_difference(m, q1, q0, w);
        for (int k = 0; k < m->nv; k++)
            CHECK_NEAR(w[k], 0.8 * v[k], 1e-12);
        CHECK(mn_q_within_limits(m, q1, 0));
        free(q0), free(q1), free(v), free(w);
        mn_model_destroy(m);
    }
}

/* mn_joint_clamp: the result is within the limits, a second clamp changes nothing, a state
 * within them is left exactly as it was; a ball's projection moves no farther than needed
 * (it is at least as close as every sampled state within the limits). */
static void test_joint_clamp(void) {
    const mn_joint_type types[3] = {MN_JOINT_HINGE, MN_JOINT_SLIDE, MN_JOINT_BALL};
    for (int ti = 0; ti < 3; ti++) {
        mn_model* m = one_joint_model(types[ti], 1);
        int j = mn_model_find_joint(m, "j");
        for (int trial = 0; trial < 200; trial++) {
            double q[4], c[4], c2[4];
            if (types[ti] == MN_JOINT_BALL) {
                mn_quat r = rand_quat();
                q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
            } else {
                q[0] = 2 * srand1();
            }
            int nq = mn_joint_type_nq(types[ti]);
            memcpy(c, q, sizeof q);
            int changed = mn_joint_clamp(m, j, c);
            int within = mn_joint_within_limits(m, j, q, 0);
            CHECK(changed == !within);
            if (!changed) CHECK(memcmp(c, q, sizeof(double) * (size_t)nq) == 0);
            CHECK(mn_joint_within_limits(m, j, c, 1e-9));
            memcpy(c2, c, sizeof c);
            mn_joint_clamp(m, j, c2);
            for (int i = 0; i < nq; i++)
                CHECK_NEAR(c2[i], c[i], 1e-12);
            if (types[ti] != MN_JOINT_BALL) {
                CHECK(c[0] >= -0.5 && c[0] <= 0.7);
                continue;
            }
            /* the swing-twist projection: twist clamped to its range, the swing vector
             * shortened to the cone, each independently of the other */
            double tw, tw2;
            mn_vec3 sw, sw2;
            mn_swing_twist(mn_q4(q[0], q[1], q[2], q[3]), m->jnt_axis[j], &tw, &sw);
            mn_swing_twist(mn_q4(c[0], c[1], c[2], c[3]), m->jnt_axis[j], &tw2, &sw2);
            CHECK_NEAR(tw2, tw < -0.4 ? -0.4 : tw > 0.3 ? 0.3 : tw, 1e-9);
            double sn = mn_vec3_norm(sw);
            CHECK(mn_vec3_dist(sw2, sn > 0.6 ? mn_vec3_scale(sw, 0.6 / sn) : sw) < 1e-9);
            /* and q = swing * twist */
            mn_quat back = mn_quat_mul(mn_quat_exp(sw), mn_quat_axis_angle(m->jnt_axis[j], tw));
            CHECK(mn_quat_angle_between(back, mn_q4(q[0], q[1], q[2], q[3])) < 1e-9);
        }
        mn_model_destroy(m);
    }
    /* the angle wrap */
    for (int k = 0; k < 100; k++) {
        double a = 40 * srand1(), w = mn_angle_wrap(a);
        CHECK(w >= -MN_PI && w < MN_PI);
        double turns = (a - w) / (2 * MN_PI);
        CHECK_NEAR(turns, round(turns), 1e-12);
    }
}

/* g(phi) of Welman eq. 4.16-4.18 evaluated directly. */
static double ccd_objective(mn_vec3 a, int n, const mn_vec3* pc, const mn_vec3* pd, const double* w,
                            const mn_mat3* Rc, const mn_mat3* Rd, double wo, double phi) {
    mn_mat3 R = mn_mat3_axis_angle(a, phi);
    double g = 0;
    for (int i = 0; i < n; i++)
        g += w[i] * mn_vec3_dot(pd[i], mn_mat3_mulv(&R, pc[i]));
    for (int c = 0; c < 3 && wo > 0; c++)
        g += wo * mn_vec3_dot(mn_mat3_col(Rd, c), mn_mat3_mulv(&R, mn_mat3_col(Rc, c)));
    return g;
}

/* mn_ccd_hinge_angle maximises the objective: no angle of a dense scan does better. */
static void test_ccd_hinge(void) {
    for (int trial = 0; trial < 50; trial++) {
        mn_vec3 a = mn_vec3_normalize(mn_v3(srand1(), srand1(), srand1()));
        mn_vec3 pc[3], pd[3];
        double w[3];
        int n = 1 + trial % 3;
        for (int i = 0; i < n; i++) {
            pc[i] = mn_v3(srand1(), srand1(), srand1());
            pd[i] = mn_v3(srand1(), srand1(), srand1());
            w[i] = urand() * mn_ccd_rho_weight(pc[i], pd[i]);
        }
        mn_mat3 Rc = mn_quat_to_mat3(rand_quat()), Rd = mn_quat_to_mat3(rand_quat());
        double wo = trial % 2 ? urand() : 0;
        mn_ccd_hinge k = {0, 0, 0};
        for (int i = 0; i < n; i++)
            mn_ccd_hinge_add_point(&k, a, pc[i], pd[i], w[i]);
        if (wo > 0) mn_ccd_hinge_add_frame(&k, a, &Rc, &Rd, wo);
        double phi = mn_ccd_hinge_angle(&k);
        CHECK(phi >= -MN_PI && phi <= MN_PI);
        double g = ccd_objective(a, n, pc, pd, w, &Rc, &Rd, wo, phi), best = -INFINITY;
        for (int s = 0; s <= 20000; s++) {
            double gs =
                ccd_objective(a, n, pc, pd, w, &Rc, &Rd, wo, -MN_PI + 2 * MN_PI * s / 20000);
            if (gs > best) best = gs;
        }
        CHECK(g >= best - 1e-12 * (1 + fabs(best)));
        /* eq. 4.19: the closed form equals the direct objective at any angle */
        double t = 3 * srand1();
        CHECK_NEAR(k.k1 * (1 - cos(t)) + k.k2 * cos(t) + k.k3 * sin(t),
                   ccd_objective(a, n, pc, pd, w, &Rc, &Rd, wo, t), 1e-12);
    }
    /* degenerate: every goal on the axis leaves g flat, and the joint stays put */
    mn_vec3 a = mn_vec3_normalize(mn_v3(1, 2, 3));
    mn_ccd_hinge k = {0, 0, 0};
    mn_ccd_hinge_add_point(&k, a, mn_vec3_scale(a, 0.3), mn_vec3_scale(a, -1.7), 1.0);
    CHECK(mn_ccd_hinge_angle(&k) == 0.0);
    /* the goal straight behind: half a turn */
    mn_vec3 u = mn_vec3_perpendicular(a);
    mn_ccd_hinge h = {0, 0, 0};
    mn_ccd_hinge_add_point(&h, a, u, mn_vec3_neg(u), 1.0);
    CHECK_NEAR(fabs(mn_ccd_hinge_angle(&h)), MN_PI, 1e-12);
    /* not finite: no step */
    mn_ccd_hinge bad = {NAN, 0, 1};
    CHECK(mn_ccd_hinge_angle(&bad) == 0.0);
}

/* The chain view: built in an arena for a path of any joint types, with the state and DOF
 * addresses the model gives; integrate and clamp act joint by joint as the primitives. */
static void test_chain_view(void) {
    mn_spec* s = random_spec(12, 1);
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    int tip = m->njoint - 1;
    int nj, nd, nq;
    CHECK(mn_chain_count(m, -1, tip, &nj, &nd, &nq) == 0);
    unsigned char buf[4096];
    mn_arena a;
    mn_arena_init(&a, buf, sizeof buf);
    mn_chain c;
    CHECK(mn_chain_init(m, -1, tip, &a, &c) == MN_OK);
    CHECK(a.used <= mn_chain_bytes(nj, nd, nq));
    CHECK(c.njoint == nj && c.ndof == nd && c.nq == nq);
    int at = 0;
    for (int i = 0; i < c.njoint; i++) {
        int j = c.jnt[i];
        CHECK(i == 0 ? m->jnt_parent[j] == -1 : m->jnt_parent[j] == c.jnt[i - 1]);
        CHECK(c.qoff[i] == at);
        for (int k = 0; k < mn_joint_type_nq((mn_joint_type)m->jnt_type[j]); k++)
            CHECK(c.qadr[at + k] == m->jnt_qadr[j] + k);
        for (int k = 0; k < mn_joint_type_nv((mn_joint_type)m->jnt_type[j]); k++) {
            CHECK(c.dof[c.doff[i] + k] == m->jnt_dofadr[j] + k);
            CHECK(c.dof_path[c.doff[i] + k] == i);
        }
        at += mn_joint_type_nq((mn_joint_type)m->jnt_type[j]);
    }
    CHECK(at == nq);
    /* gather, integrate on the chain == integrate the whole state with zeros elsewhere */
    double* q = malloc(sizeof(double) * (size_t)m->nq);
    double* q2 = malloc(sizeof(double) * (size_t)m->nq);
    double* v = calloc((size_t)m->nv, sizeof(double));
    double qc[256], vc[256];
    random_q(m, q);
    memcpy(q2, q, sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < c.ndof; k++)
        v[c.dof[k]] = vc[k] = srand1();
    mn_chain_gather(&c, q, qc);
    mn_chain_integrate(m, &c, qc, vc, 0.3);
    mn_chain_scatter(&c, qc, q);
    mn_integrate(m, q2, v, 0.3);
    for (int i = 0; i < m->nq; i++)
        CHECK_NEAR(q[i], q2[i], 1e-15);
    /* frames relative to the base (the world here) match mn_fk */
    mn_data* d = mn_data_create(m, 0);
    memcpy(d->q, q, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    mn_xform fr[64];
    mn_chain_frames(m, &c, qc, fr);
    for (int i = 0; i < c.njoint; i++)
        CHECK(mn_vec3_dist(fr[i].p, d->xf[c.jnt[i]].p) < 1e-12);
    CHECK(mn_chain_init(m, tip, 0, &a, &c) == MN_ERR_ARG || tip == 0);
    free(q), free(q2), free(v);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* Held DOFs in the chain view: marked, left out of limits, untouched by integrate and
 * clamp, freed by mn_chain_free_locked. */
static void test_chain_held(void) {
    mn_spec* sp = mn_spec_create("held");
    mn_joint_def d = mn_joint_default();
    const mn_joint_type types[5] = {MN_JOINT_FREE, MN_JOINT_HINGE, MN_JOINT_SLIDE, MN_JOINT_BALL,
                                    MN_JOINT_FREE};
    const int locks[5] = {MN_LOCK_NONE, MN_LOCK_NONE, MN_LOCK_TRANSLATION, MN_LOCK_ROTATION,
                          MN_LOCK_TRANSLATION};
    const char* names[5] = {"root", "hinge", "slide", "ball", "free"};
    for (int i = 0; i < 5; i++) {
        d.name = names[i];
        d.parent = i - 1;
        d.type = types[i];
        d.locked = locks[i];
        d.offset = mn_v3(0.1 * i, 0.2, 0);
        d.limited = types[i] == MN_JOINT_SLIDE || types[i] == MN_JOINT_HINGE;
        d.range[0] = -0.5;
        d.range[1] = 0.5;
        CHECK(mn_spec_add_joint(sp, &d, NULL) == i);
    }
    mn_model* m = mn_model_compile(sp, NULL);
    mn_spec_destroy(sp);
    CHECK(m != NULL);
    if (!m) return;
    CHECK(m->nlocked == 1 + 3 + 3);
    unsigned char buf[4096];
    mn_arena a;
    mn_arena_init(&a, buf, sizeof buf);
    mn_chain c;
    CHECK(mn_chain_init(m, 0, 4, &a, &c) == MN_OK);
    CHECK(c.ndof == 1 + 1 + 3 + 6 && c.nlocked == 7 && c.locked != NULL);
    const uint8_t expect[11] = {0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
    for (int k = 0; k < c.ndof; k++)
        CHECK(c.locked[k] == expect[k]);
    CHECK(c.lo[1] == -INFINITY &&
          c.hi[1] == INFINITY); /* the held slide has no limits in the view */
    double q[16], q0[16], v[11];
    mn_chain_gather(&c, m->q0, q);
    q[1] = 2.0; /* the held slide, outside its range */
    memcpy(q0, q, sizeof q);
    for (int k = 0; k < c.ndof; k++)
        v[k] = 0.1 * (k + 1);
    mn_chain_integrate(m, &c, q, v, 1.0);
    mn_chain_clamp(m, &c, q);
    CHECK_NEAR(q[0], q0[0] + 0.1, 1e-15); /* the hinge moves */
    for (int i = 1; i < 9; i++)
        CHECK(q[i] == q0[i]);                /* slide, ball, free position held */
    CHECK(q[9] != q0[9] || q[10] != q0[10]); /* the free joint's rotation moves */
    mn_chain_free_locked(m, &c);
    CHECK(c.locked == NULL && c.nlocked == 0 && c.lo[1] == -0.5 && c.hi[1] == 0.5);
    mn_chain_integrate(m, &c, q, v, 1.0);
    mn_chain_clamp(m, &c, q);
    CHECK(q[1] == 0.5); /* freed: moved and projected */
    CHECK(q[5] != q0[5] || q[6] != q0[6] || q[7] != q0[7]);
    mn_model_destroy(m);
}

/* A random serial chain of n FIXED, HINGE and SLIDE joints whose rest orientations are
 * the identity, quarter turns about the axes (as URDF's rpy of +-pi/2 give) or general
 * rotations, whose axes are +-x, +-y, +-z or general, and whose offsets have zero
 * components: every case of the chain FK program (src/model/chain.c). */
static mn_model* random_serial_chain(int n) {
    mn_spec* s = mn_spec_create("serial");
    char name[32];
    const mn_vec3 e[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int i = 0; i < n; i++) {
        mn_joint_def d = mn_joint_default();
        snprintf(name, sizeof name, "s%d", i);
        d.name = name;
        d.parent = i - 1;
        double u = urand();
        d.type = u < 0.7 ? MN_JOINT_HINGE : u < 0.85 ? MN_JOINT_SLIDE : MN_JOINT_FIXED;
        d.offset = mn_v3(urand() < 0.5 ? 0 : srand1(), urand() < 0.5 ? 0 : srand1(),
                         urand() < 0.5 ? 0 : srand1());
        u = urand();
        if (u < 0.2) {
            d.orient = mn_quat_identity();
        } else if (u < 0.85) { /* one to three quarter turns about coordinate axes */
            d.orient = mn_quat_identity();
            int turns = 1 + (int)(urand() * 3);
            for (int t = 0; t < turns; t++)
                d.orient = mn_quat_mul(d.orient,
                                       mn_quat_axis_angle(e[(int)(urand() * 3)],
                                                          (urand() < 0.5 ? 1 : -1) *
                                                              (urand() < 0.8 ? 0.5 : 1.0) * MN_PI));
        } else {
            d.orient = rand_quat();
        }
        u = urand();
        if (u < 0.8)
            d.axis = mn_vec3_scale(e[(int)(urand() * 3)], urand() < 0.5 ? 1 : -1);
        else
            d.axis = mn_vec3_normalize(mn_v3(srand1(), srand1(), srand1()));
        mn_spec_add_joint(s, &d, NULL);
    }
    mn_model* m = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    return m;
}

/* The chain FK program (frames kept up to a signed permutation, quarter-turn orientations
 * folded away) gives the frames of the joint-by-joint step mn_joint_apply, the previous
 * implementation, to 1e-15, and the Jacobian of mn_jacobian_chain; no allocation. */
static void test_chain_program(void) {
    int checked = 0;
    for (int trial = 0; trial < 300; trial++) {
        int n = 1 + (int)(urand() * 12);
        mn_model* m = random_serial_chain(n);
        CHECK(m != NULL);
        if (!m) continue;
        mn_chain* c = mn_chain_create(m, -1, n - 1, NULL);
        CHECK(c != NULL);
        mn_data* d = mn_data_create(m, 0);
        double qc[16];
        for (int k = 0; k < c->ndof; k++) /* small, reduced and large angles */
            qc[k] = d->q[c->qadr[k]] = (trial % 3 == 0   ? 0.5
                                        : trial % 3 == 1 ? 4.0
                                                         : 40.0) *
                                       srand1();
        mn_xform ref[16], fr[16], T, T2;
        mn_xform X = mn_xform_identity();
        int v = 0;
        for (int i = 0; i < c->njoint; i++) {
            int j = c->jnt[i];
            mn_joint_apply(m, j, m->jnt_type[j] == MN_JOINT_FIXED ? NULL : qc + v, &X);
            v += m->jnt_type[j] != MN_JOINT_FIXED;
            ref[i] = X;
        }
        double J[6 * 16], Jref[6 * 16];
        mn_vec3 local = mn_v3(0.1, -0.2, 0.3);
        long before = mn_alloc_count();
        mn_chain_frames(m, c, qc, fr);
        mn_chain_fk(m, c, qc, &T);
        mn_chain_fk_jacobian(m, c, qc, local, &T2, J);
        CHECK(mn_alloc_count() == before);
        /* rotations to 1e-15; positions to 1e-15 of the chain's size (the largest |p| on
         * it, at least 1): a different order of the same sums moves a position of size L
         * by an ulp of L */
        double dev = 0, devp = 0, size = 1;
        for (int i = 0; i < c->njoint; i++) {
            for (int k = 0; k < 9; k++)
                dev = fmax(dev, fabs(fr[i].R.m[k] - ref[i].R.m[k]));
            devp = fmax(devp, mn_vec3_dist(fr[i].p, ref[i].p));
            size = fmax(size, mn_vec3_norm(ref[i].p));
        }
        const mn_xform* tip = &ref[c->njoint - 1];
        for (int k = 0; k < 9; k++)
            dev = fmax(dev, fmax(fabs(T.R.m[k] - tip->R.m[k]), fabs(T2.R.m[k] - tip->R.m[k])));
        devp = fmax(devp, fmax(mn_vec3_dist(T.p, tip->p), mn_vec3_dist(T2.p, tip->p)));
        CHECK(dev <= 1e-15 && devp <= 1e-15 * size);
        if (!(dev <= 1e-15 && devp <= 1e-15 * size))
            printf("  chain of %d joints: rotation %.3g, position %.3g of size %.3g\n", n, dev,
                   devp, size);
        mn_fk(m, d);
        if (c->ndof > 0) {
            mn_jacobian_chain(m, d, -1, n - 1, local, Jref);
            for (int k = 0; k < 6 * c->ndof; k++)
                CHECK_NEAR(J[k], Jref[k], 1e-14);
        }
        checked++;
        mn_chain_destroy(c);
        mn_data_destroy(d);
        mn_model_destroy(m);
    }
    CHECK(checked == 300);
}

/* mn_point_local inverts mn_point_world in every frame of a random figure and state, and a
 * point at a joint's origin is its zero. */
static void test_point_local(void) {
    mn_spec* sp = random_spec(40, 1);
    mn_model* m = mn_model_compile(sp, NULL);
    mn_spec_destroy(sp);
    CHECK(m != NULL);
    if (!m) return;
    mn_data* d = mn_data_create(m, 0);
    double* v = malloc(sizeof(double) * (size_t)m->nv);
    double worst = 0;
    for (int t = 0; t < 10; t++) {
        for (int k = 0; k < m->nv; k++)
            v[k] = 2 * srand1();
        mn_integrate(m, d->q, v, 1.0);
        mn_fk(m, d);
        for (int j = 0; j < m->njoint; j++) {
            mn_vec3 local = mn_v3(srand1(), srand1(), srand1());
            mn_vec3 w = mn_point_world(d, j, local);
            worst = fmax(worst, mn_vec3_dist(mn_point_local(d, j, w), local));
            worst = fmax(worst, mn_vec3_norm(mn_point_local(d, j, d->xf[j].p)));
        }
    }
    CHECK(worst < 1e-12);
    free(v);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_compile_errors);
    RUN(test_preorder_and_layout);
    RUN(test_fk_against_reference);
    RUN(test_jacobian_fd);
    RUN(test_com_jacobian_fd);
    RUN(test_chain);
    RUN(test_chain_program);
    RUN(test_partial_fk);
    RUN(test_state_ops);
    RUN(test_free_joint_place);
    RUN(test_limits);
    RUN(test_fk_never_nan);
    RUN(test_joint_columns_fd);
    RUN(test_joint_integrate);
    RUN(test_joint_clamp);
    RUN(test_ccd_hinge);
    RUN(test_chain_view);
    RUN(test_chain_held);
    RUN(test_point_local);
    return mn_test_report();
}
