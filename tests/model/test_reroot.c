/* Re-rooting (Welman 2.1.2, 6.3): a figure re-rooted at a hand, a foot or any joint puts
 * every joint where the original does, to 1e-12, for random states; re-rooting back gives
 * the original figure; bad requests are refused. */
#include <marionette/model.h>

#include <stdlib.h>
#include <string.h>

#include "test.h"

static int add(mn_spec* s, const char* name, int parent, mn_joint_type type, mn_vec3 off,
               mn_quat orient, mn_vec3 axis) {
    mn_joint_def d = mn_joint_default();
    d.name = name;
    d.parent = parent;
    d.type = type;
    d.offset = off;
    d.orient = orient;
    d.axis = axis;
    d.mass = 1;
    d.com = mn_vec3_scale(off, 0.5);
    mn_error err;
    int i = mn_spec_add_joint(s, &d, &err);
    if (i < 0) fprintf(stderr, "%s\n", err.message);
    return i;
}

/* A figure with every kind of joint on the way from its free root to its ends: tilted rest
 * orientations, a compound (zero offset) hinge pair, a slide, balls, a hinge at a slant, a
 * free joint below the root, an end site, a second limb. */
static mn_model* figure(mn_joint_type root_type) {
    mn_spec* s = mn_spec_create("tester");
    mn_quat tilt = mn_quat_normalize(mn_q4(0.9, 0.2, -0.3, 0.1));
    mn_quat tilt2 = mn_quat_normalize(mn_q4(0.7, -0.1, 0.4, 0.3));
    mn_vec3 X = mn_v3(1, 0, 0), Y = mn_v3(0, 1, 0), Z = mn_v3(0, 0, 1);
    int root = add(s, "pelvis", -1, root_type, mn_v3(0.1, 0.9, -0.2), tilt, Z);
    int sp = add(s, "spine", root, MN_JOINT_BALL, mn_v3(0, 0.1, 0), tilt2, Z);
    int sh1 = add(s, "shoulder.1", sp, MN_JOINT_HINGE, mn_v3(0.2, 0.4, 0), mn_quat_identity(), Z);
    int sh = add(s, "shoulder", sh1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_quat_identity(), X);
    int el = add(s, "elbow", sh, MN_JOINT_HINGE, mn_v3(0, -0.3, 0.02), tilt,
                 mn_vec3_normalize(mn_v3(1, 0.3, -0.2)));
    int fo = add(s, "forearm", el, MN_JOINT_SLIDE, mn_v3(0, -0.1, 0), mn_quat_identity(), Y);
    int wr = add(s, "wrist", fo, MN_JOINT_BALL, mn_v3(0, -0.2, 0), tilt2, Y);
    /* a free joint below the root: a BVH rig's position channels */
    int pa = add(s, "palm", wr, MN_JOINT_FREE, mn_v3(0.01, -0.05, 0), tilt2, Z);
    add(s, "hand", pa, MN_JOINT_FIXED, mn_v3(0, -0.08, 0.01), tilt, Z);
    int hip = add(s, "hip", root, MN_JOINT_BALL, mn_v3(-0.1, -0.05, 0), mn_quat_identity(), Y);
    int kn = add(s, "knee", hip, MN_JOINT_HINGE, mn_v3(0, -0.45, 0), mn_quat_identity(), X);
    add(s, "foot", kn, MN_JOINT_BALL, mn_v3(0, -0.45, 0.03), tilt, Z);
    mn_error err;
    mn_model* m = mn_model_compile(s, &err);
    if (!m) fprintf(stderr, "%s\n", err.message);
    mn_spec_destroy(s);
    return m;
}

static uint64_t rng = 99;
static double urand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

static void random_state(const mn_model* m, double* q) {
    double* v = malloc(sizeof(double) * (size_t)m->nv);
    memcpy(q, m->q0, sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < m->nv; k++)
        v[k] = 3 * (urand() - 0.5);
    mn_integrate(m, q, v, 1.0);
    free(v);
}

/* The largest distance between the frames of a's joints and b's joints of the same name
 * (positions, and the rotation matrices' entries). */
static double frame_gap(const mn_model* a, const mn_data* da, const mn_model* b, const mn_data* db,
                        int* matched) {
    double gap = 0;
    *matched = 0;
    for (int j = 0; j < a->njoint; j++) {
        int k = mn_model_find_joint(b, a->jnt_name[j]);
        if (k < 0) return 1e300;
        (*matched)++;
        gap = fmax(gap, mn_vec3_dist(da->xf[j].p, db->xf[k].p));
        for (int c = 0; c < 9; c++)
            gap = fmax(gap, fabs(da->xf[j].R.m[c] - db->xf[k].R.m[c]));
    }
    return gap;
}

static void reroot_run(mn_joint_type root_type) {
    mn_model* m = figure(root_type);
    CHECK(m != NULL);
    if (!m) return;
    const char* roots[] = {"hand",  "palm",     "foot",       "wrist",
                           "elbow", "shoulder", "shoulder.1", "spine"};
    mn_data* da = mn_data_create(m, 0);
    for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++) {
        int j = mn_model_find_joint(m, roots[r]);
        mn_error err;
        random_state(m, da->q);
        mn_model* rm = mn_model_reroot(m, j, da->q, &err);
        CHECK(rm != NULL);
        if (!rm) {
            fprintf(stderr, "re-root at %s: %s\n", roots[r], err.message);
            continue;
        }
        CHECK(rm->jnt_parent[mn_model_find_joint(rm, roots[r])] == -1);
        CHECK(rm->nv == m->nv);
        mn_data* db = mn_data_create(rm, 0);
        int matched = 0;
        /* a fixed root is fixed where the state it was re-rooted at puts it: that state
         * only; a free root: any */
        int states = root_type == MN_JOINT_FREE ? 20 : 1;
        for (int t = 0; t < states; t++) {
            if (t) random_state(m, da->q);
            mn_fk(m, da);
            CHECK(mn_model_reroot_state(m, da->q, rm, db->q, &err) == MN_OK);
            mn_fk(rm, db);
            double gap = frame_gap(m, da, rm, db, &matched);
            CHECK(matched == m->njoint);
            CHECK(gap < 1e-12);
            if (!(gap < 1e-12)) fprintf(stderr, "re-root at %s: frames %g apart\n", roots[r], gap);
        }
        /* a free root: the rest states put the joints in the same places (a fixed root is
         * fixed where the state it was re-rooted at put it) */
        if (root_type == MN_JOINT_FREE) {
            mn_data* d0 = mn_data_create(m, 0);
            mn_data* d1 = mn_data_create(rm, 0);
            CHECK(frame_gap(m, d0, rm, d1, &matched) < 1e-12);
            mn_data_destroy(d0);
            mn_data_destroy(d1);
        }
        /* and back: the original figure, joint for joint, and the state it came from */
        mn_model* back = mn_model_reroot(rm, mn_model_find_joint(rm, "pelvis"), db->q, &err);
        CHECK(back != NULL);
        if (back) {
            CHECK(back->njoint == m->njoint && back->nq == m->nq);
            for (int k = 0; k < m->njoint && back->njoint == m->njoint; k++) {
                int b = mn_model_find_joint(back, m->jnt_name[k]);
                CHECK(b >= 0 && back->jnt_type[b] == m->jnt_type[k]);
                if (b < 0) continue;
                int bp = back->jnt_parent[b], mp = m->jnt_parent[k];
                CHECK((bp < 0 && mp < 0) ||
                      (bp >= 0 && mp >= 0 && !strcmp(back->jnt_name[bp], m->jnt_name[mp])));
                CHECK(mn_vec3_dist(back->jnt_offset[b], m->jnt_offset[k]) < 1e-12);
                CHECK(mn_vec3_dist(back->jnt_axis[b], m->jnt_axis[k]) < 1e-12);
                CHECK(fabs(fabs(mn_quat_dot(back->jnt_orient[b], m->jnt_orient[k])) - 1) < 1e-12);
            }
            double* qb = malloc(sizeof(double) * (size_t)back->nq);
            if (mn_model_reroot_state(rm, db->q, back, qb, &err) != MN_OK) {
                CHECK(0);
                fprintf(stderr, "back from %s: %s\n", roots[r], err.message);
            }
            /* joint by joint (the joints of a subtree may come in another order) */
            double dq = 0;
            for (int k = 0; k < m->njoint && back->njoint == m->njoint; k++) {
                int b = mn_model_find_joint(back, m->jnt_name[k]);
                int nq = mn_joint_type_nq((mn_joint_type)m->jnt_type[k]);
                for (int i = 0; b >= 0 && i < nq; i++)
                    dq = fmax(dq, fabs(qb[back->jnt_qadr[b] + i] - da->q[m->jnt_qadr[k] + i]));
            }
            if (!(dq < 1e-12)) fprintf(stderr, "back from %s: states %g apart\n", roots[r], dq);
            CHECK(dq < 1e-12);
            free(qb);
            mn_model_destroy(back);
        }
        mn_data_destroy(db);
        mn_model_destroy(rm);
    }
    mn_data_destroy(da);
    mn_model_destroy(m);
}

static void test_reroot_free(void) {
    reroot_run(MN_JOINT_FREE);
}

/* A fixed root (a robot's base): the new root is fixed where the state puts it. */
static void test_reroot_fixed(void) {
    reroot_run(MN_JOINT_FIXED);
}

static void test_reroot_refused(void) {
    mn_model* m = figure(MN_JOINT_FREE);
    mn_error err;
    CHECK(mn_model_reroot(m, -1, NULL, &err) == NULL && err.status == MN_ERR_ARG);
    CHECK(mn_model_reroot(m, m->njoint, NULL, &err) == NULL);
    mn_model* rm = mn_model_reroot(m, mn_model_find_joint(m, "hand"), NULL, &err);
    CHECK(rm != NULL);
    /* a joint that carries a reversed motion is not a segment */
    int tilde = rm ? mn_model_find_joint(rm, "wrist~") : -1;
    CHECK(tilde >= 0);
    CHECK(mn_model_reroot(rm, tilde, NULL, &err) == NULL && strstr(err.message, "segment"));
    /* the same root: the same figure */
    mn_model* same = mn_model_reroot(m, 0, NULL, &err);
    CHECK(same && same->njoint == m->njoint);
    mn_model_destroy(same);
    mn_model_destroy(rm);
    /* a hinge root cannot be turned round */
    mn_spec* s = mn_spec_create("arm");
    add(s, "base", -1, MN_JOINT_HINGE, mn_v3(0, 0, 0), mn_quat_identity(), mn_v3(0, 0, 1));
    add(s, "tip", 0, MN_JOINT_HINGE, mn_v3(1, 0, 0), mn_quat_identity(), mn_v3(0, 0, 1));
    mn_model* h = mn_model_compile(s, NULL);
    mn_spec_destroy(s);
    CHECK(mn_model_reroot(h, 1, NULL, &err) == NULL && strstr(err.message, "hinge"));
    /* states of unrelated figures do not map */
    double q[64];
    CHECK(mn_model_reroot_state(m, m->q0, h, q, &err) == MN_ERR_NOTFOUND);
    mn_model_destroy(h);
    mn_model_destroy(m);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_reroot_free);
    RUN(test_reroot_fixed);
    RUN(test_reroot_refused);
    return mn_test_report();
}
