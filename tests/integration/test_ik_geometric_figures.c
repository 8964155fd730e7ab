/* The geometric IK methods (CCD, FABRIK, analytic two-bone) on real figures: a CMU motion
 * capture skeleton read from BVH (ball joints, centimetres) and the KUKA iiwa robot read
 * from URDF (seven limited hinges), and the Welman comparison bench end to end. */
#include <marionette/ik.h>
#include <marionette/io.h>
#include <marionette/model.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test.h"

#define WALK MN_DATA "/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh"
#define IIWA MN_DATA "/robots/kuka_iiwa/model.urdf"

/* Every state number outside the chain base..tip is unchanged. */
static int only_chain_moved(const mn_model* m, const double* q0, const double* q1, int base,
                            int tip) {
    for (int j = 0; j < m->njoint; j++) {
        int on_chain =
            mn_model_is_ancestor(m, j, tip) && j != base && !mn_model_is_ancestor(m, j, base);
        if (on_chain) continue;
        int nq = mn_joint_type_nq((mn_joint_type)m->jnt_type[j]);
        for (int i = 0; i < nq; i++)
            if (q0[m->jnt_qadr[j] + i] != q1[m->jnt_qadr[j] + i]) return 0;
    }
    return 1;
}

/* The left leg of a walking figure (LeftHip, LeftKnee: ball joints) is posed to where the
 * ankle is 60 frames later, relative to the hip joint's parent, from the first frame. */
static void test_bvh_leg(void) {
    mn_model* m = NULL;
    mn_motion mo;
    mn_error err;
    if (mn_bvh_read(WALK, NULL, &m, &mo, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        CHECK(0);
        return;
    }
    mn_data* d = mn_data_create(m, 0);
    int base = mn_model_find_joint(m, "LHipJoint"), tip = mn_model_find_joint(m, "LeftAnkle");
    CHECK(base >= 0 && tip >= 0);
    double* q0 = malloc(sizeof(double) * (size_t)m->nq);
    /* the target: frame 60's ankle pose in frame 60's LHipJoint frame */
    memcpy(d->q, mo.q + 60 * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
    mn_fk(m, d);
    mn_xform inv = mn_xform_inverse(&d->xf[base]);
    mn_ik_problem p = mn_ik_problem_default();
    p.base = base;
    p.tip = tip;
    p.target_pos = mn_xform_apply(&inv, d->xf[tip].p);
    mn_mat3 Rrel = mn_mat3_tmul(&d->xf[base].R, &d->xf[tip].R);
    p.target_rot = mn_quat_from_mat3(&Rrel);
    p.pole = mn_v3(0, 0, 1); /* knee forward (+z in this clip) */
    const mn_ik_method methods[3] = {MN_IK_CCD, MN_IK_FABRIK, MN_IK_ANALYTIC};
    for (int orient = 0; orient < 2; orient++)
        for (int k = 0; k < 3; k++) {
            if (orient && methods[k] == MN_IK_FABRIK) continue;
            memcpy(d->q, mo.q, sizeof(double) * (size_t)m->nq);
            memcpy(q0, d->q, sizeof(double) * (size_t)m->nq);
            p.use_orientation = orient;
            mn_ik_options o = mn_ik_default();
            o.method = methods[k];
            o.max_iters = 5000;
            o.tol_pos = 1e-4; /* centimetres */
            o.tol_rot = 1e-5;
            mn_ik_result r;
            mn_status st = mn_ik_solve(m, d, &p, &o, &r);
            CHECK(st == MN_OK);
            if (st != MN_OK)
                fprintf(stderr, "leg %s orient=%d: %s\n", mn_ik_method_name(methods[k]), orient,
                        r.message);
            mn_fk(m, d);
            mn_vec3 want = mn_xform_apply(&d->xf[base], p.target_pos);
            CHECK(mn_vec3_dist(d->xf[tip].p, want) <= 1e-4);
            CHECK(only_chain_moved(m, q0, d->q, base, tip));
            CHECK(mn_q_within_limits(m, d->q, 1e-9));
        }
    free(q0);
    mn_data_destroy(d);
    mn_motion_free(&mo);
    mn_model_destroy(m);
}

/* The 7-DOF iiwa: targets from poses within the limits are reached within the limits. */
static void test_urdf_iiwa(void) {
    mn_model* m = NULL;
    mn_error err;
    if (mn_urdf_read(IIWA, &m, NULL, &err) != MN_OK) {
        fprintf(stderr, "%s\n", err.message);
        CHECK(0);
        return;
    }
    mn_data* d = mn_data_create(m, 0);
    int base = mn_model_find_joint(m, "lbr_iiwa_link_0"),
        tip = mn_model_find_joint(m, "lbr_iiwa_link_7");
    CHECK(base >= 0 && tip >= 0);
    int dofs[16];
    int n = mn_chain_dofs(m, base, tip, dofs, 16);
    CHECK(n == 7);
    unsigned seed = 99;
    int reached[2] = {0, 0};
    for (int t = 0; t < 10; t++) {
        mn_data_reset(m, d);
        for (int i = 0; i < n; i++) { /* a pose at 80% of each range around its middle */
            int j = m->dof_jnt[dofs[i]];
            seed = seed * 1103515245u + 12345u;
            double u = (double)((seed >> 8) & 0xffff) / 65536.0;
            double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1], mid = 0.5 * (lo + hi);
            d->q[m->jnt_qadr[j]] = mid + 0.8 * (u - 0.5) * (hi - lo);
        }
        mn_fk(m, d);
        mn_ik_problem p = mn_ik_problem_default();
        p.base = base;
        p.tip = tip;
        mn_xform inv = mn_xform_inverse(&d->xf[base]);
        p.target_pos = mn_xform_apply(&inv, d->xf[tip].p);
        for (int k = 0; k < 2; k++) {
            mn_data_reset(m, d);
            mn_ik_options o = mn_ik_default();
            o.method = k ? MN_IK_FABRIK : MN_IK_CCD;
            o.max_iters = 5000;
            o.tol_pos = 1e-5; /* metres */
            mn_ik_result r;
            mn_status st = mn_ik_solve(m, d, &p, &o, &r);
            CHECK(st == MN_OK || st == MN_ERR_UNREACHABLE || st == MN_ERR_NOCONVERGE);
            reached[k] += st == MN_OK;
            CHECK(mn_q_within_limits(m, d->q, 1e-12));
        }
    }
    printf("     iiwa: ccd reached %d of 10, fabrik %d of 10\n", reached[0], reached[1]);
    CHECK(reached[0] >= 8);
    CHECK(reached[1] >= 8);
    mn_data_destroy(d);
    mn_model_destroy(m);
}

/* `marionette bench ik --compare` prints its key=value lines and writes a well-formed SVG. */
static void test_compare_bench(void) {
    const char* svg = mn_test_write_temp(".svg", "", 0);
    char path[256], out[256], cmd[1024];
    snprintf(path, sizeof path, "%s", svg);
    snprintf(out, sizeof out, "%s", mn_test_write_temp(".out", "", 0));
    snprintf(cmd, sizeof cmd, "'%s' bench ik --compare --method ccd --repeat 1 --svg '%s' > '%s'",
             MN_CLI, path, out);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char* text = mn_test_read_file(out, NULL);
    char* plot = mn_test_read_file(path, NULL);
    CHECK(text && strstr(text, "method=ccd target=inside tol=1e-06 solved=1"));
    CHECK(text && strstr(text, "method=ccd target=edge tol=1e-06 solved=1"));
    CHECK(plot && strstr(plot, "<svg") && strstr(plot, "</svg>") && strstr(plot, "<polyline"));
    free(text);
    free(plot);
    remove(path);
    remove(out);
    snprintf(cmd, sizeof cmd, "'%s' bench ik --compare --repeat zero > /dev/null 2>&1", MN_CLI);
    st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    /* a URDF arm: the UR5's chain, its limits respected, targets in the base link's frame */
    snprintf(cmd, sizeof cmd,
             "'%s' bench ik --compare --urdf '%s/robots/ur5/ur5_robot.urdf' --base base_link "
             "--tip wrist_3_joint --method lm --repeat 1 --svg '%s' > '%s'",
             MN_CLI, MN_DATA, path, out);
    st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    text = mn_test_read_file(out, NULL);
    plot = mn_test_read_file(path, NULL);
    CHECK(text && strstr(text, "bench=ik_compare chain=ur5 dof=6 reach=1.246 "));
    CHECK(text && strstr(text, "method=lm target=inside tol=1e-06 solved=1"));
    CHECK(text && strstr(text, "method=lm target=edge tol=1e-06 solved=1"));
    CHECK(text && !strstr(text, "method=ccd")); /* --method lm only */
    CHECK(plot && strstr(plot, "6-DOF chain (ur5)") && strstr(plot, "<polyline"));
    free(text);
    free(plot);
    remove(path);
    remove(out);
    /* --urdf without --tip, --tip without --urdf: usage errors */
    snprintf(cmd, sizeof cmd,
             "'%s' bench ik --compare --urdf '%s/robots/ur5/ur5_robot.urdf' --base base_link > "
             "/dev/null 2>&1",
             MN_CLI, MN_DATA);
    st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    snprintf(cmd, sizeof cmd, "'%s' bench ik --compare --tip end > /dev/null 2>&1", MN_CLI);
    st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
}

int main(int argc, char** argv) {
    mn_test_init(argc, argv);
    RUN(test_bvh_leg);
    RUN(test_urdf_iiwa);
    RUN(test_compare_bench);
    return mn_test_report();
}
